"""The Airflow adapter: the only part of dagsmith that imports Airflow. DAG files in dags/ call into it."""
