#!/usr/bin/env python3
"""The Admin UI driven in headless Chromium (Selenium + Debian's chromium-driver), as a user would.

Starts .build/debug/couchette-gateway (COUCHETTE_GATEWAY names another binary) on two free loopback ports with a
`walrus:` database `todo`, seeds documents, then: follows the deep links and links of the databases, database,
document, users and user pages; in the sync workbench (/_admin/db/todo/sync) types the tutorial's validation
clause, runs Live Preview on a document without a type (403 "type property missing" beside the deployed
function's result), sees a syntax error flagged at its line, deploys with Deploy To Server, and checks that
`_bulk_docs` then refuses the untyped document as the tutorial shows. Fails on any JavaScript error in the browser
console. Waits on page state, never on sleeps. With SCREENSHOTS=DIR it saves PNGs of the main pages there.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GATEWAY = os.environ.get("COUCHETTE_GATEWAY", os.path.join(ROOT, ".build", "debug", "couchette-gateway"))
TUTORIAL_FUNCTION = """function(doc, oldDoc){
  /* Validate */
  // Document type is required and immutable.
  if (!doc.type || (oldDoc && doc.type != oldDoc.type)) {
  \tthrow({forbidden: "type property missing"});
  }
}"""


def free_port():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return listener.getsockname()[1]


def http(method, url, body=None, auth=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    if auth:
        import base64
        request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


class AdminUITest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="couchette-admin-ui-")
        cls.public, cls.admin = free_port(), free_port()
        config = {
            "interface": f"127.0.0.1:{cls.public}", "adminInterface": f"127.0.0.1:{cls.admin}",
            "databases": {"todo": {"server": "walrus:", "users": {
                "user1": {"password": "pass", "admin_channels": ["*"]}, "GUEST": {"disabled": True}},
                "roles": {"moderator": {}}}},
        }
        path = os.path.join(cls.folder, "config.json")
        with open(path, "w") as file:
            json.dump(config, file)
        cls.log = open(os.path.join(cls.folder, "gateway.log"), "w")
        cls.gateway = subprocess.Popen([GATEWAY, path], stdout=cls.log, stderr=subprocess.STDOUT)
        cls.base = f"http://127.0.0.1:{cls.admin}"
        deadline = time.monotonic() + 60
        while True:  # the gateway answers once both ports are bound
            try:
                urllib.request.urlopen(cls.base + "/", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or cls.gateway.poll() is not None:
                    raise RuntimeError("the gateway did not start; see " + cls.log.name)
                time.sleep(0.05)
        for doc_id, body in [("groceries", {"type": "task-list", "name": "Groceries", "owner": "user1"}),
                             ("today", {"type": "task-list", "name": "Today", "owner": "user1"})]:
            status, _ = http("PUT", f"{cls.base}/todo/{doc_id}", body)
            assert status == 201, status
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1250",
                         "--disable-gpu", "--no-first-run", "--disable-extensions"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = webdriver.ChromeService(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
        cls.browser = webdriver.Chrome(options=options, service=service)
        cls.screenshots = os.environ.get("SCREENSHOTS")

    @classmethod
    def tearDownClass(cls):
        cls.browser.quit()
        cls.gateway.terminate()
        try:
            cls.gateway.wait(timeout=30)
        except subprocess.TimeoutExpired:
            cls.gateway.kill()
        cls.log.close()
        shutil.rmtree(cls.folder, ignore_errors=True)

    # Helpers

    def open(self, path):
        self.browser.get(self.base + path)
        self.wait_ready()

    def wait_ready(self):
        WebDriverWait(self.browser, 20).until(
            lambda browser: browser.execute_script("return document.body.dataset.ready === 'true'"))

    def wait_text(self, selector, text, timeout=20):
        try:
            WebDriverWait(self.browser, timeout).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, selector), text))
        except TimeoutException:
            element = self.browser.find_elements(By.CSS_SELECTOR, selector)
            shown = element[0].text if element else "(no such element)"
            self.fail(f"{selector} never showed {text!r}; it shows {shown!r}")

    def find(self, selector):
        return self.browser.find_element(By.CSS_SELECTOR, selector)

    def type_into(self, selector, text):
        element = self.find(selector)
        element.click()
        element.send_keys(Keys.CONTROL, "a")
        element.send_keys(Keys.DELETE)
        element.send_keys(text)

    def shoot(self, name):
        if self.screenshots:
            os.makedirs(self.screenshots, exist_ok=True)
            self.browser.save_screenshot(os.path.join(self.screenshots, name + ".png"))

    def check_console(self):
        # Failed requests the page expects (a 400 for a syntax error) are logged as "network" entries: those pass.
        errors = [entry for entry in self.browser.get_log("browser")
                  if entry["level"] == "SEVERE" and entry.get("source") != "network"]
        self.assertEqual(errors, [], "JavaScript errors in the browser console")

    # Tests

    def test_1_pages_and_deep_links(self):
        self.open("/_admin/")
        self.wait_text("#databases", "todo")
        self.find("#databases a").click()
        self.wait_ready()
        self.assertTrue(self.browser.current_url.endswith("/_admin/db/todo"))
        self.wait_text("#documents", "groceries")
        self.wait_text("#doc-count", "2")
        self.shoot("admin-database")
        self.browser.find_element(By.LINK_TEXT, "groceries").click()
        self.wait_ready()
        self.wait_text("#document", '"name": "Groceries"')
        self.assertTrue(self.browser.current_url.endswith("/_admin/db/todo/documents/groceries"))
        # The seeds' deep link to the users page.
        self.open("/_admin/db/todo/users")
        self.wait_text("#users", "user1")
        self.wait_text("#roles", "moderator")
        self.browser.find_element(By.LINK_TEXT, "user1").click()
        self.wait_ready()
        self.wait_text("#user", '"name": "user1"')
        self.open("/_admin/db/nope")
        self.wait_text("main .error", "404")
        self.check_console()

    def test_2_live_preview_then_deploy(self):
        self.open("/_admin/db/todo/sync")
        self.wait_text("#status", "No sync function is deployed")
        self.type_into("#source", TUTORIAL_FUNCTION)
        self.type_into("#doc", '{"names": "Today"}')
        self.find("#preview").click()
        self.wait_text("#status", "Live Preview")
        self.wait_text("#results td.edited", "403 forbidden: type property missing")
        # Beside it, the deployed (default) function accepts the document.
        self.wait_text("#results td.deployed", "channels: none")
        self.shoot("admin-sync")
        # A stored document as a user: the typed one passes the edited function.
        self.type_into("#doc", "")
        self.type_into("#doc-id", "groceries")
        self.type_into("#user", "user1")
        self.find("#preview").click()
        self.wait_text("#results tr[data-id=groceries] td.edited", "channels: none")
        # A syntax error is flagged at its line, and nothing is deployed.
        self.type_into("#source", "function(doc) {\n  channel(doc.type);\n  if (doc.x {\n}")
        self.find("#preview").click()
        self.wait_text("#status", "Invalid sync function")
        WebDriverWait(self.browser, 20).until(
            lambda browser: browser.find_elements(By.CSS_SELECTOR, ".gutter .error"))
        self.assertEqual(self.find(".gutter .error").text, "3")
        # Deploy the tutorial's function, confirming.
        self.type_into("#source", TUTORIAL_FUNCTION)
        self.find("#deploy").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        self.browser.switch_to.alert.accept()
        self.wait_text("#status", "Deployed to server.")
        # The tutorial's _bulk_docs: the untyped document is refused.
        status, results = http("POST", f"http://127.0.0.1:{self.public}/todo/_bulk_docs",
                               {"docs": [{"type": "task-list", "name": "Groceries"}, {"names": "Today"}]},
                               auth="user1:pass")
        self.assertEqual(status, 201)
        self.assertIn("rev", results[0])
        self.assertEqual(results[1], {"error": "forbidden", "reason": "type property missing", "status": 403})
        # The page shows the deployed function after a reload.
        self.open("/_admin/db/todo/sync")
        self.wait_text("#status", "The deployed function.")
        self.assertIn("type property missing", self.find("#source").get_attribute("value"))
        # Impact before deploy: routing by type and granting the owner would change every stored document.
        self.type_into("#source", "function(doc) {\nchannel(doc.type);\naccess(doc.owner, doc.type);\n}")
        self.find("#impact-all").click()
        self.find("#impact-run").click()
        self.wait_text("#impact-summary", "3 of 3 documents change.")
        self.wait_text("#impact-principals", "user1: gains task-list")
        self.shoot("admin-impact")
        # Deploy it, then roll back to the tutorial's function from the version history.
        self.find("#deploy").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        self.browser.switch_to.alert.accept()
        self.wait_text("#status", "Deployed to server.")
        self.wait_text("#history li[data-version='2']", "(deployed)")
        self.find("#history li[data-version='1'] button.rollback").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        self.browser.switch_to.alert.accept()
        self.wait_text("#status", "Rolled back to version 1.")
        self.wait_text("#history li[data-version='3']", "(deployed)")
        self.assertIn("type property missing", self.find("#source").get_attribute("value"))
        status, results = http("POST", f"http://127.0.0.1:{self.public}/todo/_bulk_docs", {"docs": [{"names": "x"}]},
                               auth="user1:pass")
        self.assertEqual(results[0].get("reason"), "type property missing")
        self.check_console()

    def test_3_cross_site_writes_are_refused(self):
        request = urllib.request.Request(f"{self.base}/todo/evil", data=b"{}", method="PUT",
                                         headers={"Content-Type": "application/json", "Origin": "http://evil.example"})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        self.assertEqual(refused.exception.code, 403)


if __name__ == "__main__":
    unittest.main(verbosity=2)
