"""dagsmith's Airflow UI plugin on a real deployment (api-server, scheduler, dag-processor, triggerer) with its
own store and the FAB auth manager: the JSON API as scripts use it, with Airflow's logins and roles, and the pages
as a person uses them in headless Chromium (screenshots in test-artifacts/ui_plugin/); and Airflow's own UI and
REST API showing each pipeline's DAG to whom dagsmith's pages show the pipeline."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from sqlalchemy import func, select

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.airflow.ownership import builder_dag_id
from dagsmith.airflow.rest import AirflowError
from dagsmith.airflow.serve import LocalDeployment, free_port
from dagsmith.config import Settings
from dagsmith.execution.specs import dag_id, write_spec
from dagsmith.registry import versions
from dagsmith.registry.versions import Decision
from dagsmith.store import schema
from dagsmith.store.databases import scratch_database
from dagsmith.store.db import session_scope
from tests.agents.test_each_target import houses
from tests.conftest import CATALOG, UPLOADS, catalog_copy
from tests.deploy.airflow_api import Api
from tests.deploy.browser import airflow_ui
from tests.waiting import wait_until

pytestmark = pytest.mark.xdist_group("ui-plugin")  # one deployment for the module
META_DAG = "dagsmith_build_pipeline"
USERS = {"ana": "user", "bob": "user", "cai": "user", "dee": "user", "vic": "viewer"}
GOOD_SERVICE = CATALOG / "median_imputer"


@pytest.fixture(scope="module")
def served(server_home, tmp_path_factory, catalog_template):
    """A deployment with its own catalog (uploads must not reach other tests' store), FAB's auth manager and six
    logins."""
    with (catalog_copy(server_home, catalog_template, tmp_path_factory.mktemp("ui-home")) as settings,
          scratch_database(Settings(home=server_home, database_url=None)) as metadata):
        deployment = LocalDeployment(settings, port=free_port(), runtime="local", metadata_url=metadata.database_url,
                                     refresh_seconds=5, users=USERS, auth="fab")
        with deployment:
            yield deployment


def client(deployment: LocalDeployment, user: str | None) -> httpx.Client:
    headers = {}
    if user:
        login = deployment.login(user)
        headers["Authorization"] = f"Bearer {Api(deployment.url, login.user, login.password).token}"
    return httpx.Client(base_url=deployment.url + "/dagsmith", headers=headers, timeout=120, follow_redirects=False)


def service_files(folder: Path) -> dict:
    return {"main": ("main.py", (folder / "main.py").read_bytes()),
            "requirements": ("requirements.txt", (folder / "requirements.txt").read_bytes())}


def stored_services(settings: Settings) -> int:
    with session_scope(settings) as session:
        return session.scalar(select(func.count()).select_from(schema.Microservice))


def test_only_logged_in_users_reach_the_plugin_and_airflow_lists_its_pages(served):
    anonymous = client(served, None)
    assert anonymous.get("/api/catalog").status_code == 401
    page = anonymous.get("/catalog")
    assert page.status_code == 303 and "/auth/login/?next=" in page.headers["location"]
    assert anonymous.get("/docs").status_code == 404 and anonymous.get("/api/openapi.json").status_code == 401
    paths = client(served, "vic").get("/api/openapi.json").json()["paths"]
    assert {"/api/catalog", "/api/plan", "/api/runs", "/api/pipelines"} <= set(paths)
    forged = httpx.get(served.url + "/dagsmith/api/pipelines", headers={"Authorization": "Bearer not-a-jwt"})
    assert forged.status_code in (401, 403)
    admin = served.login()
    plugins = Api(served.url, admin.user, admin.password).call("GET", "/api/v2/plugins")["plugins"]
    views = {v["name"]: v["href"] for p in plugins if p["name"] == "dagsmith" for v in p["external_views"]}
    assert views == {"Catalog": "dagsmith/catalog", "Upload": "dagsmith/upload", "Build": "dagsmith/build",
                     "Pipelines": "dagsmith/pipelines"}


def test_catalog_search_filters_and_detail_show_claims_beside_the_code(served):
    vic = client(served, "vic")
    found = vic.get("/api/catalog", params={"q": "fill missing values with the median of each column"}).json()
    assert found["services"][0]["name"] == "median_imputer", found["services"][:3]
    assert all("score" in s for s in found["services"])
    models = vic.get("/api/catalog", params={"stage": "modelling"}).json()["services"]
    assert models and {s["stage"] for s in models} == {"modelling"}
    grouping = vic.get("/api/catalog", params={"q": "group similar rows into clusters", "category": "modelling"}).json()
    assert {s["category"] for s in grouping["services"]} == {"modelling"}
    assert grouping["services"][0]["stage"] == "clustering", grouping["services"][:3]

    detail = vic.get("/api/catalog/median_imputer").json()
    assert detail["manifest"]["description"]  # the uploader's claim ...
    assert "median" in detail["code_analysis"]["summary"].lower()  # ... beside what the code does
    assert detail["code_analysis"]["stages"][0] == "imputation" and detail["code_analysis"]["parameters"]
    assert detail["statistics"] == {"runs": 0, "successes": 0, "failures": 0, "success_rate": None, "successors": []}
    assert vic.get("/api/catalog/no_such_service").status_code == 404


def test_uploads_run_the_catalog_checks_and_show_every_rejection_reason(served):
    ana, vic = client(served, "ana"), client(served, "vic")
    before = stored_services(served.settings)
    form = {"name": "ana_median_filler", "description": "fills gaps", "category": "preprocessing",
            "keywords": "impute, median", "python_version": "3.11"}
    assert vic.post("/api/catalog", data=form, files=service_files(GOOD_SERVICE)).status_code == 403

    added = ana.post("/api/catalog", data=form, files=service_files(GOOD_SERVICE))
    assert added.status_code == 201, added.text
    assert added.json()["outcome"] == "added" and added.json()["analysis"]["stages"][0] == "imputation"
    detail = ana.get("/api/catalog/ana_median_filler").json()
    assert detail["manifest"]["author"] == "ana" and detail["manifest"]["keywords"] == ["impute", "median"]

    bad = ana.post("/api/catalog", data={**form, "name": "ana_shell"},
                   files=service_files(UPLOADS / "shell_injection"))
    assert bad.status_code == 422 and bad.json()["outcome"] == "rejected"
    assert any(f["check"].startswith("security") for f in bad.json()["findings"]), bad.json()
    unpinned = ana.post("/api/catalog", data={**form, "name": "ana_unpinned", "requirements_text": "scikit-learn>=1"},
                        files={"main": ("main.py", (GOOD_SERVICE / "main.py").read_bytes())})
    assert unpinned.status_code == 422
    assert "'scikit-learn>=1' is not pinned" in unpinned.json()["findings"][0]["message"], unpinned.json()
    binary = ana.post("/api/catalog", data={**form, "name": "ana_binary"}, files={"main": ("main.py", b"\xff\xfe\x00")})
    assert binary.status_code == 422 and "not UTF-8" in binary.json()["findings"][0]["message"]
    assert stored_services(served.settings) == before + 1  # rejected uploads leave nothing behind


def wait_for_pipeline(settings: Settings, owner: str, timeout: float = 900) -> int:
    def stored() -> int | None:
        with session_scope(settings) as session:
            return session.scalar(select(schema.Pipeline.id).where(schema.Pipeline.owner == owner))

    return wait_until(stored, timeout=timeout, what=f"a pipeline owned by {owner}")


def test_a_user_plans_chooses_and_triggers_then_sees_only_what_is_theirs_or_shared(served, tmp_path):
    ana, bob, admin = client(served, "ana"), client(served, "bob"), client(served, "admin")
    csv = tmp_path / "penguins.csv"
    datasets.load("penguins").to_csv(csv, index=False)
    uploaded = ana.post("/api/datasets", files={"file": ("penguins.csv", csv.read_bytes())})
    assert uploaded.status_code == 201
    dataset = uploaded.json()["dataset"]
    assert "/datasets/uploads/ana/" in dataset

    outside = ana.post("/api/plan", json={"dataset": "/etc/passwd", "goal": "predict the species"})
    assert outside.status_code == 422 and "outside the data folders" in outside.json()["detail"]
    vague = ana.post("/api/plan", json={"dataset": dataset, "goal": "do something"})
    assert vague.status_code == 422 and vague.json()["detail"]
    plan = ana.post("/api/plan", json={"dataset": dataset, "goal": "predict the species"})
    assert plan.status_code == 200, plan.text
    intent, stages = plan.json()["intent"], plan.json()["recommendation"]["stages"]
    assert intent["task_type"] == "multiclass_classification" and intent["target"] == "species"
    assert intent["reasons"]["target"]
    modelling = next(s for s in stages if s["stage"] == "modelling")["candidates"]
    assert len(modelling) >= 3 and set(modelling[0]["signals"]) == {"keyword", "semantic", "compatibility", "pattern"}
    second = modelling[1]["microservice"]

    started = ana.post("/api/runs", json={"dataset": dataset, "goal": "predict the species",
                                          "choices": {"modelling": second}})
    assert started.status_code == 201, started.text
    run_id, anas = started.json()["dag_run_id"], builder_dag_id("ana")
    assert started.json()["url"] == f"/dags/{anas}/runs/{quote(run_id, safe='')}"
    login = served.login()
    api = Api(served.url, login.user, login.password)
    triggered = api.call("GET", f"/api/v2/dags/{anas}/dagRuns/{run_id}")
    assert triggered["triggering_user_name"] == "ana" and triggered["conf"]["choices"] == f"modelling={second}"
    assert "user" not in triggered["conf"]  # the pipeline is the triggering login's, whatever a conf says
    assert api.wait(anas, run_id) == "success"
    # the run records the profile as her page shows it, with no value from the data; its tasks read the rest
    profiled = api.xcom(anas, run_id, "plan", key="profile")
    assert set(profiled) == {"n_rows", "n_columns", "format", "quality"} and profiled["n_rows"] == 344, profiled
    assert not {"Adelie", "Gentoo", "Biscoe", "Torgersen"} & set(re.findall(r"\w+", json.dumps(profiled)))

    # Another login neither sees ana's build runs (their dataset, goal, logs and the profile's values from the
    # data) nor builds in her name.
    bobs = Api(served.url, "bob", served.login("bob").password)
    assert anas not in _listed(bobs) and META_DAG not in _listed(bobs) and builder_dag_id("bob") in _listed(bobs)
    for path in (f"/api/v2/dags/{anas}/dagRuns", f"/api/v2/dags/{anas}/dagRuns/{run_id}",
                 f"/api/v2/dags/{anas}/dagRuns/{run_id}/taskInstances/profile/logs/1",
                 f"/api/v2/dags/{anas}/dagRuns/{run_id}/taskInstances/profile/xcomEntries/return_value"):
        assert _answer(bobs, path) in (403, 404), path
    assert anas not in {r["dag_id"] for r in bobs.call("GET", "/api/v2/dags/~/dagRuns?limit=100")["dag_runs"]}
    for dag in (anas, META_DAG):
        with pytest.raises(AirflowError) as refused:
            bobs.trigger(dag, {"dataset": dataset, "goal": "predict the species", "on_behalf_of": "ana"})
        assert refused.value.status in (403, 404), dag
    impersonating = bobs.trigger(builder_dag_id("bob"), {"dataset": dataset, "goal": "predict the species",
                                                         "user": "ana", "on_behalf_of": "ana"})
    assert bobs.wait(builder_dag_id("bob"), impersonating, timeout=300) == "failed"
    assert bobs.task_instances(builder_dag_id("bob"), impersonating)["plan"]["state"] == "failed"
    log = bobs.log_text(builder_dag_id("bob"), impersonating, "plan")
    assert f"{builder_dag_id('bob')} builds for bob only" in log

    pipeline_id = wait_for_pipeline(served.settings, "ana")
    mine = ana.get(f"/api/pipelines/{pipeline_id}").json()
    assert mine["owner"] == "ana" and not mine["shared"]
    assert next(s for s in mine["steps"] if s["stage"] == "modelling")["microservice"] == second
    assert [p["id"] for p in ana.get("/api/pipelines").json()] == [pipeline_id]
    assert pipeline_id not in [p["id"] for p in bob.get("/api/pipelines").json()]
    assert bob.get(f"/api/pipelines/{pipeline_id}").status_code == 404  # private: as if it did not exist
    assert pipeline_id in [p["id"] for p in admin.get("/api/pipelines").json()]

    run = ana.get(f"/api/runs/{mine['runs'][-1]['execution_id']}").json()
    assert run["status"] == "completed" and any(k.endswith("accuracy") for k in run["metrics"]), run["metrics"]
    assert run["plots"]
    image = ana.get(run["plots"][0]["url"].removeprefix("/dagsmith"))
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")
    assert bob.get(f"/api/runs/{run['execution_id']}").status_code == 404
    assert run["forecast_url"] is None  # a classifier's run: no forecast past the data to offer
    assert ana.get(f"/runs/{run['execution_id']}/forecast").status_code == 404
    (Path(run["workspace"]) / "forecast.csv").write_text("day,prediction\n2026-01-05,3.5\n")  # as a forecast leaves it
    offered = ana.get(f"/api/runs/{run['execution_id']}").json()["forecast_url"]
    download = ana.get(offered.removeprefix("/dagsmith"))
    assert download.status_code == 200 and download.text.startswith("day,prediction")
    assert download.headers["content-type"].startswith("text/csv")
    assert bob.get(offered.removeprefix("/dagsmith")).status_code == 404  # only who may see the run

    assert bob.put(f"/api/pipelines/{pipeline_id}/shared", params={"shared": True}).status_code == 404
    assert ana.put(f"/api/pipelines/{pipeline_id}/shared", params={"shared": True}).status_code == 200
    assert pipeline_id in [p["id"] for p in bob.get("/api/pipelines").json()]
    assert bob.put(f"/api/pipelines/{pipeline_id}/shared", params={"shared": False}).status_code == 403


def test_several_targets_are_a_question_or_one_pipeline_each_built_and_run_through_the_rest_api(served):
    cai = client(served, "cai")
    (served.settings.home / "datasets").mkdir(exist_ok=True)
    csv = served.settings.home / "datasets" / "houses.csv"
    houses().to_csv(csv, index=False)
    goal = "predict the price and also the number of rooms"
    asked = cai.post("/api/plan", json={"dataset": str(csv), "goal": goal})
    assert asked.status_code == 422
    assert "'price' and 'rooms'" in asked.json()["detail"] and "each_target" in asked.json()["detail"]
    both = cai.post("/api/plan", json={"dataset": str(csv), "goal": "predict both price and rooms"}).json()
    assert [p["intent"]["target"] for p in both["plans"]] == ["price", "rooms"]
    page = cai.post("/build/plan", data={"dataset_path": str(csv), "goal": goal, "each_target": "true"})
    assert page.status_code == 200 and 'name="each_target" value="on"' in page.text
    assert 'name="choice_price:modelling"' in page.text and 'name="choice_rooms:modelling"' in page.text
    # fields said outright win over the words, and travel from the form's plan to the run it triggers
    given = cai.post("/api/plan", json={"dataset": str(csv), "goal": "", "target": "rooms"})
    assert given.status_code == 200, given.text
    intent = given.json()["intent"]
    assert intent["target"] == "rooms" and "--target rooms" in intent["reasons"]["target"]
    form = {"dataset_path": str(csv), "goal": "", "target": "rooms", "columns": "rooms: bedrooms and others\noops"}
    refused = cai.post("/build/plan", data=form)
    assert refused.status_code == 422 and "line 2" in refused.text
    page = cai.post("/build/plan", data={**form, "columns": "rooms: bedrooms and others"})
    assert page.status_code == 200 and '"columns": {"rooms": "bedrooms and others"}' in page.text
    unread = cai.post("/build/plan", data={**form, "columns": "", "horizon": "soon"})
    assert unread.status_code == 422 and "give a count of rows" in unread.text
    misfit = cai.post("/api/plan", json={"dataset": str(csv), "goal": "", "target": "rooms", "horizon": "2 years"})
    assert misfit.status_code == 422 and "--horizon 2 years says how far ahead a forecast looks" in misfit.text

    plans = cai.post("/api/plan", json={"dataset": str(csv), "goal": goal, "each_target": True}).json()["plans"]
    [price, rooms] = plans
    second = next(s for s in rooms["recommendation"]["stages"] if s["stage"] == "modelling")["candidates"][1]
    started = cai.post("/api/runs", json={"dataset": str(csv), "goal": goal, "each_target": True,
                                          "target_choices": {"rooms": {"modelling": second["microservice"]}},
                                          "columns": {"rooms": "bedrooms and others"}})
    assert started.status_code == 201, started.text
    login = served.login()
    api = Api(served.url, login.user, login.password)
    run_id = started.json()["dag_run_id"]
    conf = api.call("GET", f"/api/v2/dags/{builder_dag_id('cai')}/dagRuns/{run_id}")["conf"]
    assert conf["each_target"] is True and conf["choices"] == f"rooms: modelling={second['microservice']}"
    assert conf["columns"] == {"rooms": "bedrooms and others"}
    assert api.wait(builder_dag_id("cai"), run_id) == "success"  # the meta-DAG ran both pipelines' own DAGs to the end
    pipelines = {p["target"]: p for p in cai.get("/api/pipelines").json() if p["owner"] == "cai"}  # others shared
    assert sorted(pipelines) == ["price", "rooms"]
    assert {p["last_run"]["status"] for p in pipelines.values()} == {"completed"}
    steps = cai.get(f"/api/pipelines/{pipelines['rooms']['id']}").json()["steps"]
    assert next(s for s in steps if s["stage"] == "modelling")["microservice"] == second["microservice"]


def test_a_person_searches_uploads_plans_and_triggers_in_the_browser(served, tmp_path):
    login = served.login("bob")
    (served.settings.home / "datasets").mkdir(exist_ok=True)
    csv = served.settings.home / "datasets" / "penguins.csv"
    datasets.load("penguins").to_csv(csv, index=False)
    with airflow_ui(served.url, "ui_plugin") as ui:
        ui.login(login.user, login.password)
        page, base = ui.page, served.url + "/dagsmith"
        # Airflow's menu lists the pages; the plugin's pages open inside Airflow.
        page.goto(served.url + "/plugin/dagsmith-catalog")
        page.frame_locator("iframe").locator("#services").wait_for()
        ui.screenshot("catalog-in-airflow")

        page.goto(base + "/catalog")
        page.fill("input[name=q]", "scale numeric columns to zero mean and unit variance")
        page.click("button[type=submit]")
        first = page.locator("#services tr").nth(1).locator("a").inner_text()
        assert first == "standard_scaler", first
        ui.screenshot("catalog-search")
        page.click(f"text={first}")
        page.locator("#claims").wait_for()
        assert "What the code does" in page.locator("body").inner_text()
        ui.screenshot("service-detail")

        page.goto(base + "/upload")
        page.fill("#name", "bob_median_filler")
        page.fill("#description", "fills gaps with medians")
        page.click("button[type=submit]")
        page.set_input_files("#main", str(GOOD_SERVICE / "main.py"))
        page.set_input_files("#requirements", str(GOOD_SERVICE / "requirements.txt"))
        ui.screenshot("upload-files")
        page.click("button[type=submit]")
        assert "bob_median_filler added" in page.locator("#outcome").inner_text()
        ui.screenshot("upload-added")

        page.goto(base + "/upload")
        page.fill("#name", "bob_exfiltrator")
        page.click("button[type=submit]")
        page.set_input_files("#main", str(UPLOADS / "socket_exfiltration" / "main.py"))
        page.set_input_files("#requirements", str(UPLOADS / "socket_exfiltration" / "requirements.txt"))
        page.click("button[type=submit]")
        assert "was rejected" in page.locator("#outcome").inner_text()
        reasons = page.locator("#findings").inner_text()
        assert "security" in reasons, reasons
        ui.screenshot("upload-rejected")

        page.goto(base + "/build")
        page.fill("#dataset_path", str(csv))
        page.fill("#goal", "predict the species")
        page.click("button[type=submit]")
        page.locator("#intent").wait_for()
        assert "multiclass classification of species" in page.locator("#intent").inner_text()
        modelling = page.locator("table.stage[data-stage=modelling]")
        second = modelling.locator("tr").nth(2).locator("td").nth(1).inner_text().strip()
        modelling.locator("input[type=radio]").nth(1).check()
        ui.screenshot("plan")
        page.click("text=Build and run")
        run_id = page.locator("#run-id").inner_text()
        bobs = builder_dag_id("bob")
        assert page.locator("#run-link").get_attribute("href").startswith(f"/dags/{bobs}/runs/")
        ui.screenshot("triggered")
        admin = served.login()
        api = Api(served.url, admin.user, admin.password)
        triggered = api.call("GET", f"/api/v2/dags/{bobs}/dagRuns/{run_id}")
        assert triggered["triggering_user_name"] == "bob"
        assert re.fullmatch(rf"(?s).*modelling={second}.*", triggered["conf"]["choices"]), triggered
        assert api.wait(bobs, run_id) == "success"

        page.goto(base + "/pipelines")
        row = page.locator("#pipelines tr", has_text="bob")
        assert "completed" in row.inner_text() and "dagsmith_pipeline_" in row.inner_text()
        ui.screenshot("pipelines")
        row.locator("a").first.click()
        assert second in page.locator("#steps").inner_text()
        page.locator("#runs a").first.click()
        assert page.locator("#status").inner_text().startswith("completed")
        assert "accuracy" in page.locator("#metrics").inner_text()
        plot = page.locator("#plots img").first
        plot.wait_for()
        assert plot.evaluate("img => img.complete && img.naturalWidth > 0")  # the plot is served and rendered
        # the species are told apart near perfectly: the answer may open by asking for a review
        assert "Predicts species (multiclass classification) with " in page.locator("#answer").inner_text()
        ui.screenshot("run")
        page.click("#report-link")
        report = page.locator("#report")
        assert report.locator("h1").inner_text() == "predict the species"
        assert report.locator("h2", has_text="How the pipeline was chosen").count() == 1
        images = report.locator("img")
        images.first.wait_for()
        page.wait_for_load_state("networkidle")
        assert images.evaluate_all("all => all.every(img => img.complete && img.naturalWidth > 0)")
        ui.screenshot("report")


def _answer(api: Api, path: str) -> int:
    """The HTTP status Airflow's REST API answers ``path`` with."""
    try:
        api.call("GET", path)
    except AirflowError as error:
        return error.status
    return 200


def _listed(api: Api) -> set[str]:
    return {d["dag_id"] for d in api.call("GET", "/api/v2/dags?limit=100")["dags"]}


def _dag_list(ui, user: str, password: str, shot: str) -> str:
    """The Airflow UI's DAG list as ``user`` sees it, once it has rendered."""
    ui.page.context.clear_cookies()
    ui.login(user, password)
    ui.page.goto(ui.base + "/dags")
    ui.page.get_by_text(META_DAG).first.wait_for()
    ui.screenshot(shot)
    return ui.page.locator("body").inner_text()


def _versioned_pipeline(settings: Settings, owner: str) -> int:
    """A pipeline with a completed run, two versions of its model (the first the champion, the second a worse
    challenger) registered as a run's ``finish`` does, and a scoring of the champion in which one feature drifted."""
    with session_scope(settings) as session:
        row = schema.Pipeline(name="churn", goal="predict churn", owner=owner, dataset="churn.csv",
                              task_type="binary_classification", target="churn")
        session.add(row)
        session.flush()
        run = schema.Execution(pipeline_id=row.id, owner=owner, status="completed", dataset="churn.csv", trace={})
        session.add(run)
        session.flush()
        pipeline_id, execution_id = row.id, run.id
    for name, score, decision in ((".a", 0.8, Decision(True, "the first version of the pipeline")),
                                  (".b", 0.7, Decision(False, "roc_auc 0.7000 below the champion's 0.8000"))):
        frozen = versions.pipeline_folder(settings, pipeline_id) / name
        frozen.mkdir(parents=True)
        versions.register(settings, pipeline_id, execution_id, frozen, decision,
                          compared=versions.champion_of(settings, pipeline_id), metrics={"roc_auc": score},
                          fingerprint="f" * 64, table_schema={"features": [{"name": "tenure"}]})
    with session_scope(settings) as session:
        champion = versions.find(session, pipeline_id, None)
        session.add(schema.ScoringRun(version_id=champion.id, owner=owner, dataset="/data/churn-12.csv",
                                      output="/data/churn-12.predictions.csv", rows=1000, drifted=["tenure"],
                                      report={"drift": {"columns": {"tenure": {"psi": 0.31}, "plan": {"psi": 0.02}}}}))
    return pipeline_id


def test_a_pipelines_page_shows_its_model_versions_and_drift_and_its_owner_or_an_admin_picks_the_champion(served):
    dee, bob, vic, admin = (client(served, user) for user in ("dee", "bob", "vic", "admin"))
    pipeline_id = _versioned_pipeline(served.settings, "dee")
    shown = dee.get(f"/api/pipelines/{pipeline_id}").json()
    assert [(v["version"], v["status"], v["score"]) for v in shown["model_versions"]] == [
        (1, "champion", "roc_auc 0.8000"), (2, "challenger", "roc_auc 0.7000")]
    [scored] = shown["scoring_runs"]
    assert (scored["version"], scored["rows"], scored["drifted"]) == (1, 1000, ["tenure"])
    assert scored["drift"] == {"tenure": 0.31, "plan": 0.02} and shown["may_change"]
    page = dee.get(f"/pipelines/{pipeline_id}").text
    assert f"/pipelines/{pipeline_id}/versions/2/promote" in page and "drifted: tenure" in page
    assert f"/pipelines/{pipeline_id}/versions/1/promote" not in page  # the champion already

    promote = f"/api/pipelines/{pipeline_id}/versions/2/promote"
    assert bob.post(promote).status_code == 404  # private: as if it did not exist
    assert dee.put(f"/api/pipelines/{pipeline_id}/shared", params={"shared": True}).is_success
    for other in (bob, vic):  # shared: they see its versions, and may not choose its champion
        refused = other.post(promote)
        assert refused.status_code == 403 and "only dee (or an admin)" in refused.json()["detail"]
        assert other.post(f"/api/pipelines/{pipeline_id}/rollback").status_code == 403
    assert "/versions/2/promote" not in vic.get(f"/pipelines/{pipeline_id}").text
    promoted = dee.post(promote)
    assert promoted.status_code == 200, promoted.text
    assert (promoted.json()["status"], promoted.json()["decision"]["by"]) == ("champion", "dee")
    again = dee.post(promote)
    assert again.status_code == 422 and "already the champion" in again.json()["detail"]
    assert 'id="rollback"' in dee.get(f"/pipelines/{pipeline_id}").text
    back = admin.post(f"/api/pipelines/{pipeline_id}/rollback")
    assert back.status_code == 200, back.text
    assert back.json()["version"] == 1 and back.json()["decision"]["by"] == "admin"
    assert "rolled back from v2" in back.json()["decision"]["reason"]
    form = dee.post(f"/pipelines/{pipeline_id}/versions/2/promote")  # the page's button
    assert form.status_code == 303 and form.headers["location"].endswith(f"/pipelines/{pipeline_id}#versions")
    statuses = {v["version"]: v["status"] for v in bob.get(f"/api/pipelines/{pipeline_id}").json()["model_versions"]}
    assert statuses == {1: "retired", 2: "champion"}


def test_airflow_shows_a_private_pipeline_to_its_owner_and_admins_only_and_a_shared_one_to_everyone(served, embedder):
    """Last in the module: the pipeline it shares is everyone's from then on."""
    csv = served.settings.home / "datasets" / "penguins.csv"
    csv.parent.mkdir(exist_ok=True)
    datasets.load("penguins").to_csv(csv, index=False)
    pipeline = plan(csv, "predict the species", user="dee", settings=served.settings, embedder=embedder).pipeline
    write_spec(pipeline.id, served.settings)
    child = dag_id(pipeline.id)
    apis = {user: Api(served.url, user, served.login(user).password) for user in ("dee", "bob", "vic", "admin")}
    assert apis["admin"].wait_for_dag(child)["owners"] == ["dee"]  # the pipeline's owner, not 'airflow'
    wait_until(lambda: _answer(apis["dee"], f"/api/v2/dags/{child}") == 200, timeout=120,
               what="the dag-processor to grant the owner their pipeline's DAG")
    assert child in _listed(apis["dee"]) and child in _listed(apis["admin"])
    for other in ("bob", "vic"):
        assert child not in _listed(apis[other])
        for path in (f"/api/v2/dags/{child}", f"/api/v2/dags/{child}/dagRuns", f"/api/v2/dags/{child}/details"):
            assert _answer(apis[other], path) in (403, 404), (other, path)
    with pytest.raises(AirflowError) as refused:
        apis["bob"].trigger(child, {})
    assert refused.value.status in (403, 404)
    assert client(served, "bob").get(f"/api/pipelines/{pipeline.id}").status_code == 404  # as dagsmith's pages say
    shown = re.compile(rf"\b{child}\b")
    with airflow_ui(served.url, "ui_plugin_ownership") as ui:
        for user, sees in (("bob", False), ("dee", True), ("admin", True)):
            assert bool(shown.search(_dag_list(ui, user, served.login(user).password, f"dags-{user}"))) == sees, user

        # Shared in dagsmith's pages: Airflow shows it to every login.
        assert client(served, "dee").put(f"/api/pipelines/{pipeline.id}/shared", params={"shared": True}).is_success
        # FAB lists DAGs from the roles' grants as they stand, but checks one DAG against the login's permissions
        # as cached for up to [fab] cache_ttl: wait for both.
        wait_until(lambda: all(child in _listed(apis[u]) and _answer(apis[u], f"/api/v2/dags/{child}") == 200
                               for u in ("bob", "vic")), timeout=180,
                   what="the dag-processor to grant the shared pipeline's DAG to everyone")
        assert shown.search(_dag_list(ui, "bob", served.login("bob").password, "dags-bob-shared"))
    assert apis["bob"].call("GET", f"/api/v2/dags/{child}")["owners"] == ["dee"]

    # A build for someone with no login is refused at once, before anything is written; a spec owned by no login
    # (written before, or by hand) loads for admins alone and leaves every other pipeline's DAG loaded.
    refused = apis["admin"].trigger(META_DAG, {"dataset": str(csv), "goal": "predict the species",
                                               "on_behalf_of": "ghost"})
    assert apis["admin"].wait(META_DAG, refused, timeout=120) == "failed"
    assert "there is no login named ghost" in apis["admin"].log_text(META_DAG, refused, "plan")
    assert apis["admin"].task_instances(META_DAG, refused)["plan"]["try_number"] == 1
    with session_scope(served.settings) as session:
        assert not session.scalars(select(schema.Pipeline).where(schema.Pipeline.owner == "ghost")).all()
    before = _listed(apis["admin"])
    ghost = plan(csv, "predict the species", user="ghost", settings=served.settings, embedder=embedder).pipeline
    write_spec(ghost.id, served.settings)
    apis["admin"].wait_for_dag(dag_id(ghost.id))
    assert before <= _listed(apis["admin"]) and child in _listed(apis["dee"])
    assert apis["admin"].call("GET", "/api/v2/importErrors")["total_entries"] == 0
