#!/usr/bin/env python3
"""The Admin UI in Firefox (Debian's firefox-esr, headless, driven over Marionette with Mozilla's marionette_driver
from PyPI): every page loads and shows its content with no uncaught error, and the sync workbench's Live Preview
works. The Chromium test (admin_ui_test.py) goes through every feature; this one checks the same pages run in the
other engine. Waits on page state, never on sleeps.
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.request

from marionette_driver import By, Wait
from marionette_driver.marionette import Marionette

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GATEWAY = os.environ.get("COUCHETTE_GATEWAY", os.path.join(ROOT, ".build", "debug", "couchette-gateway"))


def free_port():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return listener.getsockname()[1]


def wait_for_port(port, process, what, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"{what} did not start")
            time.sleep(0.05)


def put(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="PUT",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status


class AdminUIFirefoxTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="couchette-admin-firefox-")
        cls.admin, public, marionette = free_port(), free_port(), free_port()
        config = {"interface": f"127.0.0.1:{public}", "adminInterface": f"127.0.0.1:{cls.admin}",
                  "databases": {"todo": {"server": "walrus:", "users": {"user1": {"password": "pass"}},
                                         "sync": "function(doc){ channel(doc.list); access(doc.owner, doc.list); }"}}}
        with open(os.path.join(cls.folder, "config.json"), "w") as file:
            json.dump(config, file)
        cls.log = open(os.path.join(cls.folder, "gateway.log"), "w")
        cls.gateway = subprocess.Popen([GATEWAY, os.path.join(cls.folder, "config.json")], stdout=cls.log,
                                       stderr=subprocess.STDOUT)
        wait_for_port(cls.admin, cls.gateway, "the gateway")
        cls.base = f"http://127.0.0.1:{cls.admin}"
        put(f"{cls.base}/todo/list-a", {"list": "lists.a", "owner": "user1", "name": "Groceries"})
        profile = os.path.join(cls.folder, "profile")
        os.makedirs(profile)
        with open(os.path.join(profile, "user.js"), "w") as file:
            file.write(f'user_pref("marionette.port", {marionette});\n'
                       'user_pref("browser.shell.checkDefaultBrowser", false);\n'
                       'user_pref("datareporting.policy.dataSubmissionEnabled", false);\n')
        firefox = shutil.which("firefox-esr") or shutil.which("firefox")
        cls.firefox_log = open(os.path.join(cls.folder, "firefox.log"), "w")
        cls.firefox = subprocess.Popen([firefox, "--headless", "--marionette", "--no-remote", "--profile", profile],
                                       stdout=cls.firefox_log, stderr=subprocess.STDOUT)
        wait_for_port(marionette, cls.firefox, "Firefox")
        cls.client = Marionette(host="127.0.0.1", port=marionette)
        cls.client.start_session()

    @classmethod
    def tearDownClass(cls):
        try:
            cls.client.delete_session()
        except Exception:
            pass
        for process in (cls.firefox, cls.gateway):
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        cls.log.close()
        cls.firefox_log.close()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def open(self, path, shows):
        """Opens a page, waits until it is ready, and checks it shows `shows` and no error."""
        self.client.navigate(self.base + path)
        Wait(self.client, timeout=30).until(
            lambda client: client.execute_script("return document.body.dataset.ready === 'true'"))
        text = self.client.find_element(By.CSS_SELECTOR, "main").text
        self.assertIn(shows, text, path)
        self.assertEqual(self.client.find_elements(By.CSS_SELECTOR, "main p.error"), [], path)
        self.assert_no_errors(path)

    def assert_no_errors(self, path):
        errors = self.client.execute_script("return document.body.dataset.errors || '0'")
        last = self.client.execute_script("return document.body.dataset.lastError || ''")
        self.assertEqual(errors, "0", f"{path}: {last}")

    def test_every_page_runs(self):
        self.open("/_admin/", "todo")
        self.open("/_admin/db/todo", "list-a")
        self.open("/_admin/db/todo/documents/list-a", "Revision tree")
        self.open("/_admin/db/todo/channels", "lists.a")
        self.open("/_admin/db/todo/channels/lists.a", "list-a")
        self.open("/_admin/db/todo/users", "user1")
        self.open("/_admin/db/todo/users/user1", "Sessions")
        self.open("/_admin/db/todo/access?user=user1&doc=list-a", "user1 can read list-a through lists.a")
        self.open("/_admin/logs", "Log keys")
        self.open("/_admin/db/todo/sync", "Live Preview")

    def test_live_preview(self):
        self.open("/_admin/db/todo/sync", "Live Preview")
        source = self.client.find_element(By.CSS_SELECTOR, "#source")
        source.clear()
        source.send_keys('function(doc){ if (!doc.type) throw({forbidden: "type property missing"}); }')
        document = self.client.find_element(By.CSS_SELECTOR, "#doc")
        document.clear()
        document.send_keys('{"names": "Today"}')
        self.client.find_element(By.CSS_SELECTOR, "#preview").click()
        Wait(self.client, timeout=30).until(
            lambda client: "403 forbidden: type property missing" in client.find_element(By.CSS_SELECTOR, "#results").text)
        self.assertIn("channels: none", self.client.find_element(By.CSS_SELECTOR, "#results td.deployed").text)
        self.assert_no_errors("/_admin/db/todo/sync")


if __name__ == "__main__":
    unittest.main(verbosity=2)
