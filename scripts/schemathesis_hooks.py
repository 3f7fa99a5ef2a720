"""Schemathesis hooks for scripts/schemathesis-run.sh.

`_changes` feeds of type `longpoll` and `continuous` wait for changes: 300 s by default, forever with a
heartbeat. Generated requests for them get `timeout=1000` (one second) and no `heartbeat`, so that each
answers within the run's request timeout. Everything else is sent as generated.
"""

import schemathesis

WAITING_FEEDS = {"longpoll", "continuous"}


def last(value):
    """A repeated query parameter's last value, which is the one the gateway uses."""
    return value[-1] if isinstance(value, list) and value else value


@schemathesis.hook
def before_call(context, case, kwargs):
    if not case.operation.path.endswith("/_changes"):
        return
    body = case.body if isinstance(case.body, dict) else {}
    query = case.query if isinstance(case.query, dict) else {}
    feed = last(query["feed"]) if "feed" in query else body.get("feed")
    if not isinstance(feed, str) or feed not in WAITING_FEEDS:
        return
    # The query overrides the body, so a bounded query timeout bounds the feed whatever the body says.
    query.pop("heartbeat", None)
    body.pop("heartbeat", None)
    query["timeout"] = 1000
    case.query = query
