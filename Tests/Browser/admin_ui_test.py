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
                "user1": {"password": "pass", "admin_channels": ["*"]}, "user2": {"password": "pass"},
                "GUEST": {"disabled": True}},
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

    def wait_url(self, suffix):
        """Waits until the browser has gone to a URL ending in `suffix` and that page is ready."""
        WebDriverWait(self.browser, 20).until(lambda browser: browser.current_url.endswith(suffix))
        self.wait_ready()

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
        self.assertEqual(self.browser.execute_script("return document.body.dataset.errors || '0'"), "0",
                         self.browser.execute_script("return document.body.dataset.lastError || ''"))

    # Tests

    def test_1_pages_and_deep_links(self):
        self.open("/_admin/")
        self.wait_text("#databases", "todo")
        self.find("#databases a").click()
        self.wait_url("/_admin/db/todo")
        self.wait_text("#documents", "groceries")
        self.wait_text("#doc-count", "2")
        self.browser.find_element(By.LINK_TEXT, "groceries").click()
        self.wait_url("/_admin/db/todo/documents/groceries")
        WebDriverWait(self.browser, 20).until(
            EC.text_to_be_present_in_element_value((By.CSS_SELECTOR, "#doc-json"), '"name": "Groceries"'))
        # The seeds' deep link to the users page.
        self.open("/_admin/db/todo/users")
        self.wait_text("#users", "user1")
        self.wait_text("#roles", "moderator")
        self.browser.find_element(By.LINK_TEXT, "user1").click()
        self.wait_url("/_admin/db/todo/users/user1")
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
        # An online resync with its progress: the deployed function (no channels) takes task-list away again.
        self.find("#resync").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        self.browser.switch_to.alert.accept()
        self.wait_text("#resync-status", "completed: 3 of 3 documents")
        self.check_console()

    def test_3_access_explainer(self):
        source = "function(doc) { channel(doc.list); access(doc.owner, doc.list); requireUser(doc.owner); }"
        request = urllib.request.Request(f"{self.base}/todo/_config/sync", data=source.encode(), method="PUT")
        urllib.request.urlopen(request, timeout=10)
        status, _ = http("PUT", f"{self.base}/todo/list-a", {"list": "lists.a", "owner": "user2"})
        self.assertEqual(status, 201)
        self.open("/_admin/db/todo/access?user=user2&doc=list-a")
        self.wait_text("#access-read", "user2 can read list-a through lists.a")
        self.wait_text("#access-write", "user2 can write list-a")
        self.wait_text("#access-channels tr[data-name='lists.a']", "document list-a")
        self.shoot("admin-access")
        # Typing another document and asking again, as a user would.
        self.type_into("#access-doc", "groceries")
        self.find("#explain-user").click()
        self.wait_text("#access-read", "user2 cannot read groceries")
        self.type_into("#access-channel", "lists.a")
        self.find("#explain-channel").click()
        self.wait_text("#channel-users", "Users: user1, user2")
        self.check_console()

    def test_4_users_and_roles(self):
        self.open("/_admin/db/todo/users")
        self.type_into("#new-user-name", "carol")
        self.type_into("#new-user-password", "secret")
        self.type_into("#new-user-channels", "a, b")
        self.find("#create-user").click()
        self.wait_url("/_admin/db/todo/users/carol")
        self.wait_text("#user", '"name": "carol"')
        self.assertEqual(self.find("#user-channels").get_attribute("value"), "a, b")
        # Edit: channels, a role, disabled; the API shows the change.
        self.type_into("#user-channels", "a, c")
        self.type_into("#user-roles", "moderator")
        self.find("#user-disabled").click()
        self.find("#save-user").click()
        self.wait_text("#user-status", "Saved.")
        status, user = http("GET", f"{self.base}/todo/_user/carol")
        self.assertEqual((sorted(user["admin_channels"]), user["admin_roles"], user["disabled"]), (["a", "c"], ["moderator"], True))
        self.wait_text("#user", '"disabled": true')
        # A role, created from the list.
        self.open("/_admin/db/todo/users")
        self.type_into("#new-role-name", "editors")
        self.type_into("#new-role-channels", "drafts")
        self.find("#create-role").click()
        self.wait_text("#roles", "editors")
        self.wait_ready()
        self.browser.find_element(By.LINK_TEXT, "editors").click()
        self.wait_url("/_admin/db/todo/roles/editors")
        self.wait_text("#role", '"drafts"')
        # A session of user2, listed and revoked.
        status, _ = http("POST", f"http://127.0.0.1:{self.public}/todo/_session", {"name": "user2", "password": "pass"})
        self.assertEqual(status, 200)
        self.open("/_admin/db/todo/users/user2")
        WebDriverWait(self.browser, 20).until(
            lambda browser: browser.find_elements(By.CSS_SELECTOR, "#sessions li[data-session]"))
        self.find("#sessions li[data-session] button.revoke").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        self.browser.switch_to.alert.accept()
        self.wait_text("#sessions", "No session.")
        # Delete the user, confirming.
        self.open("/_admin/db/todo/users/carol")
        self.find("#delete-user").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        self.browser.switch_to.alert.accept()
        self.wait_url("/_admin/db/todo/users")
        self.assertNotIn("carol", self.find("#users").text)
        self.assertEqual(http("GET", f"{self.base}/todo/_user/carol")[0], 404)
        self.check_console()

    def test_5_database_page(self):
        self.open("/_admin/db/todo")
        self.wait_text("#counters", "requests")
        # A write shows in the live changes view as it happens.
        status, _ = http("PUT", f"{self.base}/todo/live-1", {"list": "lists.live", "owner": "user2"})
        self.assertEqual(status, 201)
        self.wait_text("#live-changes", "live-1")
        self.find("#go-offline").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        self.browser.switch_to.alert.accept()
        self.wait_text("#state", "Offline")
        self.find("#go-online").click()
        self.wait_text("#state", "Online")
        self.find("#compact").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        self.browser.switch_to.alert.accept()
        self.wait_text("#db-status", "Compacted:")
        self.shoot("admin-database")
        # Search by ID.
        self.type_into("#doc-search", "gro")
        self.find("#doc-search").send_keys(Keys.ENTER)
        self.wait_url("?id=gro")
        self.wait_text("#documents", "groceries")
        self.assertNotIn("today", self.find("#documents").text)
        self.check_console()

    def test_6_documents(self):
        self.open("/_admin/db/todo")
        self.find("#new-doc").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        prompt = self.browser.switch_to.alert
        prompt.send_keys("notes")
        prompt.accept()
        self.wait_url("/_admin/db/todo/documents/notes?new")
        self.type_into("#doc-json", '{"text": "hello", "list": "lists.a", "owner": "user2"}')
        self.find("#save-doc").click()
        self.wait_text("#doc-saved", "Saved as 1-")
        self.wait_text("#doc-channels", "lists.a")
        status, stored = http("GET", f"{self.base}/todo/notes")
        self.assertEqual((status, stored["text"]), (200, "hello"))
        # An attachment, uploaded from a file.
        upload = os.path.join(self.folder, "note.txt")
        with open(upload, "w") as file:
            file.write("attached words")
        self.find("#attachment-file").send_keys(upload)
        self.find("#upload").click()
        self.wait_text("#attachments", "note.txt")
        with urllib.request.urlopen(f"{self.base}/todo/notes/note.txt", timeout=10) as response:
            self.assertEqual(response.read(), b"attached words")
        # A conflicting branch made elsewhere; the tree shows both, and keeping one deletes the other.
        status, stored = http("GET", f"{self.base}/todo/notes?revs=true")
        generation, digests = stored["_revisions"]["start"], stored["_revisions"]["ids"]
        branch = {"_id": "notes", "_rev": f"{generation}-ffff", "text": "elsewhere", "list": "lists.a", "owner": "user2",
                  "_revisions": {"start": generation, "ids": ["ffff"] + digests[1:]}}
        status, _ = http("PUT", f"{self.base}/todo/notes?new_edits=false", branch)
        self.assertEqual(status, 201)
        self.open("/_admin/db/todo/documents/notes")
        self.wait_text("#branches", "(winner)")
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, "#revision-tree circle.leaf")), 2)
        self.shoot("admin-document")
        loser = [item for item in self.browser.find_elements(By.CSS_SELECTOR, "#branches li") if "(winner)" not in item.text][0]
        loser.find_element(By.CSS_SELECTOR, "button.keep").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        self.browser.switch_to.alert.accept()
        WebDriverWait(self.browser, 20).until(
            lambda browser: browser.find_elements(By.CSS_SELECTOR, "#revision-tree circle.tombstone"))
        self.wait_ready()
        self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, "#branches"), [])
        # Purge, confirming: the document is gone entirely.
        self.find("#purge-doc").click()
        WebDriverWait(self.browser, 20).until(EC.alert_is_present())
        self.browser.switch_to.alert.accept()
        self.wait_url("/_admin/db/todo")
        self.assertEqual(http("GET", f"{self.base}/todo/notes")[0], 404)
        self.check_console()

    def test_7_channels(self):
        self.open("/_admin/db/todo/channels")
        self.wait_text("#channels tr[data-channel='lists.a']", "lists.a")
        self.find("#channels tr[data-channel='lists.a'] a").click()
        self.wait_url("/_admin/db/todo/channels/lists.a")
        self.wait_text("#channel-documents", "list-a")
        status, _ = http("PUT", f"{self.base}/todo/list-a2", {"list": "lists.a", "owner": "user2"})
        self.assertEqual(status, 201)
        self.wait_text("#channel-tail", "list-a2")
        self.check_console()

    def test_8_logs(self):
        self.open("/_admin/logs")
        crud = self.find("#log-keys input[data-key='CRUD']")
        if not crud.is_selected():
            crud.click()
            self.wait_text("#logs-status", "CRUD on.")
        status, _ = http("PUT", f"{self.base}/todo/logged", {"list": "lists.a", "owner": "user2"})
        self.assertEqual(status, 201)
        self.wait_text("#log-lines", 'CRUD: Stored doc "logged"')
        # Only CRUD lines once filtered by key.
        self.type_into("#log-key", "CRUD")
        self.find("#log-key").send_keys(Keys.TAB)
        self.wait_text("#log-lines", 'CRUD: Stored doc "logged"')
        shown = [line.text for line in self.browser.find_elements(By.CSS_SELECTOR, "#log-lines li")]
        self.assertTrue(shown and all("CRUD:" in line for line in shown), shown)
        self.shoot("admin-logs")
        self.check_console()

    def test_9_cross_site_writes_are_refused(self):
        request = urllib.request.Request(f"{self.base}/todo/evil", data=b"{}", method="PUT",
                                         headers={"Content-Type": "application/json", "Origin": "http://evil.example"})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        self.assertEqual(refused.exception.code, 403)


if __name__ == "__main__":
    unittest.main(verbosity=2)
