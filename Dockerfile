# dagsmith on the official Airflow image. The full deployment (scheduler, dag-processor, api-server,
# triggerer, docker-socket-proxy) is described in docker-compose.yaml.
FROM apache/airflow:3.3.2-python3.11

USER root
COPY --chown=airflow:root . /opt/dagsmith
USER airflow
RUN pip install --no-cache-dir -r /opt/dagsmith/requirements.txt \
 && pip install --no-cache-dir --no-deps -e /opt/dagsmith
WORKDIR /opt/dagsmith
ENV DAGSMITH_HOME=/opt/airflow/dagsmith
