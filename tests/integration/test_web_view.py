"""The web view in a real browser (headless Chromium driven by Selenium) against `berth up`: the
overview shows the nodes, a bound and a pending pod with its reason; the pending pod's page shows
its explain table; the overview follows a new bind without a reload."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .user_cluster import berth, reap, start_up, user_env, wait_line

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
CLUSTER = """
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: zone-a}}
status: {allocatable: {cpu: "2", memory: 2Gi, pods: "10"}}
---
kind: Pod
metadata: {name: small}
spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
---
kind: Pod
metadata: {name: huge}
spec: {containers: [{name: c, resources: {requests: {cpu: "10"}}}]}
"""

WHAT_IF = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins: {score: {enabled: [{name: NodeResourcesBalancedAllocation, weight: 40}]}}
"""


def _click(element: Any) -> bool:
    """Click, or False when a redraw replaced the element meanwhile (the wait looks it up again)."""
    from selenium.common.exceptions import StaleElementReferenceException

    try:
        element.click()
    except StaleElementReferenceException:
        return False
    return True


@pytest.fixture
def browser() -> Iterator[Any]:
    if CHROMIUM is None or DRIVER is None:
        pytest.skip("Chromium and its driver are not installed (apt-get install chromium chromium-driver; "
                    "make test does it when it runs as root)")
    selenium = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (make test installs it)")
    from selenium.webdriver.chrome.service import Service

    options = selenium.ChromeOptions()
    # The gateway's certificate comes from the cluster's own authority, which this browser profile
    # cannot be told to trust.
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                "--ignore-certificate-errors"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    driver = selenium.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_web_view_shows_where_pods_went_and_why(browser: Any, state: Path, tmp_path: Path) -> None:  # noqa: F811
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    env = user_env(state)
    err = (tmp_path / "up.err").open("w")
    proc = start_up(state, env, err)
    try:
        wait_line(proc, "berth ready: ", 60)
        ui = wait_line(proc, "berth ui: ", 5).split()[2]
        (tmp_path / "cluster.yaml").write_text(CLUSTER)
        assert berth("apply", "-f", str(tmp_path / "cluster.yaml"), env=env).returncode == 0
        wait = WebDriverWait(browser, 30, poll_frequency=0.2, ignored_exceptions=(StaleElementReferenceException,))

        # Without a token the page sends the browser to sign in; a wrong token is refused there.
        browser.get(ui)
        wait.until(lambda d: d.find_elements(By.ID, "token"))
        browser.find_element(By.ID, "token").send_keys("not-a-token")
        browser.find_element(By.ID, "sign-in").click()
        wait.until(lambda d: d.find_elements(By.ID, "error"))
        viewer = json.loads((state / "berth.json").read_text())["viewer_token"]
        browser.find_element(By.ID, "token").send_keys(viewer)
        browser.find_element(By.ID, "sign-in").click()
        wait.until(lambda d: d.find_element(By.ID, "bound").text == "1"
                   and d.find_element(By.ID, "pending-count").text == "1")
        wait.until(lambda d: [c.get_attribute("data-node")
                              for c in d.find_elements(By.CSS_SELECTOR, "a.cell")] == ["n1"])
        wait.until(lambda d: "topology.kubernetes.io/zone=zone-a" in d.find_element(By.ID, "nodes").text)
        # The page redraws as events arrive: elements are looked up afresh each time.
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#pending tbody tr").text.startswith(
            "default huge 0/1 nodes are available: 1 Insufficient cpu."))
        browser.save_screenshot(str(tmp_path / "overview.png"))

        wait.until(lambda d: _click(d.find_element(By.LINK_TEXT, "huge")))
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#explain tbody tr"))
        row = browser.find_element(By.CSS_SELECTOR, "#explain tbody tr")
        assert row.text.startswith("n1 NodeResourcesFit: Insufficient cpu")
        assert row.find_elements(By.CSS_SELECTOR, "td.fail"), "the failing plugin stands out"
        assert "Insufficient cpu" in browser.find_element(By.ID, "events").text

        browser.back()
        wait.until(lambda d: d.find_element(By.ID, "bound").text == "1")
        (tmp_path / "more.yaml").write_text("kind: Pod\nmetadata: {name: another}\nspec: {containers: [{name: c}]}\n")
        assert berth("apply", "-f", str(tmp_path / "more.yaml"), env=env).returncode == 0
        marker = browser.find_element(By.TAG_NAME, "main")
        wait.until(lambda d: d.find_element(By.ID, "bound").text == "2")
        assert marker.is_displayed(), "updated in place, not reloaded"
        assert browser.execute_script("return performance.getEntriesByType('navigation').length") == 1

        wait.until(lambda d: _click(d.find_element(By.LINK_TEXT, "Replay")))
        wait.until(lambda d: d.find_element(By.ID, "run").is_enabled())
        browser.find_element(By.ID, "run").click()
        wait.until(lambda d: "replayed as recorded" in d.find_element(By.ID, "summary").text)
        assert ", 0 diverged" in browser.find_element(By.ID, "summary").text
        browser.find_element(By.ID, "config").send_keys(WHAT_IF)
        browser.find_element(By.ID, "run").click()
        wait.until(lambda d: "the configuration would change" in d.find_element(By.ID, "summary").text)
        browser.find_element(By.ID, "config").clear()
        browser.find_element(By.ID, "config").send_keys("kind: Pod")
        browser.find_element(By.ID, "run").click()
        wait.until(lambda d: d.find_element(By.ID, "status").text.startswith("replay failed: "))
        assert "HTTP" not in browser.find_element(By.ID, "status").text, "the gateway's reason is shown"
        stopping = time.monotonic()
        proc.terminate()
        proc.wait(30)
        assert time.monotonic() - stopping < 15, "the page's waiting request does not hold the gateway up"
    finally:
        reap(proc, err)
