"""The Airflow UI as a person uses it, in headless Chromium (Debian's package, driven by Playwright), with a
screenshot of every page it checks kept in the test artifacts folder."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import unquote

from playwright.sync_api import Page, sync_playwright

#: Where screenshots are kept; CI collects this folder.
ARTIFACTS = Path(os.environ.get("DAGSMITH_TEST_ARTIFACTS") or Path(__file__).parents[2] / "test-artifacts")
#: Headless Chromium as root on a closed network: no sandbox, GPU, QUIC or background connections.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: The UI renders client-side from the REST API; on a busy 2-core machine a page can take a while.
PAGE_TIMEOUT_MS = 60_000


class AirflowUI:
    def __init__(self, page: Page, base: str, shots: Path):
        self.page, self.base, self.shots = page, base, shots

    def login(self, user: str, password: str) -> None:
        self.page.goto(self.base + "/auth/login")
        self.page.fill("input[name=username]", user)
        self.page.fill("input[name=password]", password)
        self.page.click("[type=submit]")  # a button (simple auth manager) or an input (FAB)
        self.page.get_by_text("Welcome").wait_for()  # the home page, logged in

    def screenshot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=path, full_page=True)
        return path

    def trigger(self, dag: str, params: dict[str, str], switches: tuple[str, ...] = ()) -> tuple[str, str]:
        """Fill the DAG's trigger form and submit it; returns the form's text (labels and descriptions) and the
        new run's id."""
        self.page.goto(f"{self.base}/dags/{dag}")
        self.page.get_by_role("button", name="Trigger Dag").click()
        form = self.page.get_by_role("dialog")
        form.get_by_text("Run Parameters").wait_for()
        for name, value in params.items():
            form.locator(f"#element_{name}").fill(value)
        for name in switches:
            form.locator(f"label:has(input[name=element_{name}])").click()
        text = form.inner_text()
        self.screenshot(f"{dag}-trigger-form")
        form.get_by_role("button", name="Trigger").click()
        self.page.wait_for_url(re.compile(f"/dags/{dag}/runs/.+"))
        return text, unquote(self.page.url.rsplit("/runs/", 1)[1].split("/")[0])

    def answer(self, dag: str, run_id: str, task: str, field: str, value: str) -> str:
        """Answer a human-in-the-loop task's form; returns what the form showed the person."""
        self.page.goto(f"{self.base}/dags/{dag}/runs/{run_id}/tasks/{task}/required_actions")
        box = self.page.locator(f"#element_{field}")
        box.wait_for()
        shown = self.page.locator("body").inner_text()
        box.fill(value)
        self.screenshot(f"{dag}-{task}-form")
        self.page.get_by_role("button", name="OK").click()
        self.page.get_by_text(f"{task} response successful").wait_for()
        return shown

    def dag_docs(self, dag: str) -> str:
        """The DAG's documentation as its page renders it."""
        self.page.goto(f"{self.base}/dags/{dag}")
        self.page.get_by_role("button", name="Dag Docs").click()
        docs = self.page.get_by_role("dialog")
        docs.get_by_text("Dag Documentation").wait_for()
        self.screenshot(f"{dag}-docs")
        return docs.inner_text()

    def task_names(self, dag: str) -> str:
        self.page.goto(f"{self.base}/dags/{dag}")
        self.page.get_by_text("finish").first.wait_for()
        self.screenshot(f"{dag}-grid")
        return self.page.locator("body").inner_text()


@contextmanager
def airflow_ui(base: str, test_name: str) -> Iterator[AirflowUI]:
    """A logged-out browser page on the deployment at ``base``; screenshots go to ARTIFACTS/<test_name>/."""
    shots = ARTIFACTS / test_name
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    chromium = shutil.which("chromium")
    assert chromium, "headless UI tests need Debian's chromium: run scripts/setup-browser.sh"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            ui = AirflowUI(page, base, shots)
            try:
                yield ui
            except BaseException:
                with suppress(Exception):  # the page as it was when the test failed, if it still answers
                    ui.screenshot("failure")
                raise
        finally:
            browser.close()
