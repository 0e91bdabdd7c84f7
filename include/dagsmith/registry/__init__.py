"""Model versions: every completed run's fitted model, frozen under the model root (``Settings.models_dir``) and
recorded in ``model_versions``, one champion per pipeline that ``dagsmith predict`` scores new rows with.

What services made is untrusted: dagsmith's process copies and reads JSON and Parquet only, and every model is
applied to rows by a sandboxed scoring step (``registry.scoring``), never unpickled here.
"""
