#!/usr/bin/env bash
# One-shot set-up for `docker compose up` (the airflow-init service, as the Airflow user in the dagsmith image):
# Airflow's metadata schema, the UI/API login from .env, dagsmith's schema and its catalog index.
# Safe to run again: migrations upgrade in place and the catalog sync only re-analyses changed code.
set -euo pipefail

log() { printf '[dagsmith-init] %s\n' "$*"; }

log "Airflow metadata database"
airflow db migrate

log "login for ${AIRFLOW_ADMIN_USER}"
python - "$AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE" <<'PY'
import json, os, sys
path = sys.argv[1]
with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as file:
    json.dump({os.environ["AIRFLOW_ADMIN_USER"]: os.environ["AIRFLOW_ADMIN_PASSWORD"]}, file)
PY

log "dagsmith database and catalog"
mkdir -p "$DAGSMITH_HOME/datasets"
dagsmith db upgrade
dagsmith catalog sync "$DAGSMITH_CATALOG_DIR"
log "ready: UI and REST API on port 8080 of airflow-api-server"
