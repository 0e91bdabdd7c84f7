"""dagsmith in the Airflow UI: the plugin's pages and JSON API (catalog, upload, build, pipelines).

``plugins/dagsmith_ui.py`` mounts ``app.create_app()`` at ``/dagsmith`` in Airflow's api-server and adds the
pages to Airflow's navigation; every route authenticates with Airflow's own login (see ``access``).
"""
