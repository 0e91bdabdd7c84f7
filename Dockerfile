# The dagsmith image: the official Airflow 3.3 image with dagsmith installed. docker-compose.yaml runs every
# Airflow service (api-server, scheduler, dag-processor, triggerer) and the one-shot init from it.
FROM apache/airflow:3.3.2-python3.11

USER airflow
# Dependencies first (their layer survives code changes); torch from the CPU wheel index, not the CUDA build.
COPY --chown=airflow:root requirements.txt /opt/dagsmith/requirements.txt
RUN pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
 && pip install --no-cache-dir -r /opt/dagsmith/requirements.txt
COPY --chown=airflow:root . /opt/dagsmith
RUN pip install --no-cache-dir --no-deps -e /opt/dagsmith \
 && mkdir -p /opt/airflow/auth
ENV HF_HUB_OFFLINE=1
WORKDIR /opt/dagsmith
