"""dagsmith in the Airflow UI: the plugin's pages and JSON API (catalog, upload, build, pipelines).

``plugins/dagsmith_ui.py`` mounts ``app.create_app()`` at ``PREFIX`` in Airflow's api-server (built on the first
request: ``deferred``) and adds the pages to Airflow's navigation; every route authenticates with Airflow's own login
(see ``access``).
"""

#: Where the plugin mounts its app in Airflow's api-server.
PREFIX = "/dagsmith"
