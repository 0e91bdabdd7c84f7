#!/usr/bin/env bash
# One-shot set-up for `docker compose up` (the airflow-init service, as the Airflow user in the dagsmith image):
# Airflow's metadata schema, the UI/API login from .env (with dagsmith's roles under the FAB auth manager),
# dagsmith's schema and its catalog index.
# Safe to run again: migrations upgrade in place and the catalog sync only re-analyses changed code.
set -euo pipefail

log() { printf '[dagsmith-init] %s\n' "$*"; }

log "Airflow metadata database"
airflow db migrate

log "login for ${AIRFLOW_ADMIN_USER}"
if [[ "$AIRFLOW__CORE__AUTH_MANAGER" == *FabAuthManager ]]; then
  # dagsmith's roles, before the dag-processor parses the DAGs that name them, and the admin's FAB login
  python - <<'PY'
import os
from dagsmith.airflow.fab_logins import make_logins
make_logins({os.environ["AIRFLOW_ADMIN_USER"]: {"role": "admin", "password": os.environ["AIRFLOW_ADMIN_PASSWORD"]}})
PY
else
  python - "$AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE" <<'PY'
import json, os, sys
path = sys.argv[1]
with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as file:
    json.dump({os.environ["AIRFLOW_ADMIN_USER"]: os.environ["AIRFLOW_ADMIN_PASSWORD"]}, file)
PY
fi

log "dagsmith database and catalog"
mkdir -p "$DAGSMITH_HOME/datasets"
# the workers refuse to start on a workspace root without this mark (dagsmith.execution.workers)
python -c 'from dagsmith.config import Settings; from dagsmith.execution.workers import mark_shared
mark_shared(Settings.from_env().workspaces_dir)'

dagsmith db upgrade
dagsmith catalog sync "$DAGSMITH_CATALOG_DIR"
log "ready: UI and REST API on port 8080 of airflow-api-server"
