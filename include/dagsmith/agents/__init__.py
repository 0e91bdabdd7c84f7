"""The five agents as plain functions over typed contracts; Airflow tasks and the CLI call them."""
