"""The scheduled audit: verify the store's hash chain, and log the head digest it vouches for.

`verify_store` runs `infra.audit.verify.verify` (read-only) on the worker's store and writes one log
line: `audit.ok` with the event count and the head (notification id and global digest, the
value to publish as an anchor), and what no checkpoint anchors yet (`unanchored`: normal for
the last few seconds of a live store's events), or `audit.broken` at error level with the first
break.
Recording the result as an event is left for later; the log line is the record for now.
"""

from __future__ import annotations

from typing import Any

import msgspec
import structlog

from infra.audit.verify import verify
from infra.settings import redact_url
from workers.app import VERIFY_STORE, app
from workers.services import worker_database_url
from workers.transient import RETRY_OPTIONS

log = structlog.get_logger("sabot.workers.audits")


@app.task(name=VERIFY_STORE, **RETRY_OPTIONS)
def verify_store() -> dict[str, Any]:
    """Verify the worker's store; the report's summary (also logged)."""
    database_url = worker_database_url()
    report = verify(database_url)
    summary = {
        "store": redact_url(database_url),
        "ok": report.ok,
        "events": report.events,
        "streams": report.streams,
        "head_notification_id": report.head_notification_id,
        "head_digest": report.head_digest,
        "seconds": round(report.seconds, 3),
        "unanchored": list(report.unanchored),
    }
    if report.ok:
        log.info("audit.ok", **summary)
    else:
        broken = report.first_break or report.findings[0]
        log.error("audit.broken", **summary, first_break=msgspec.to_builtins(broken),
                  where=broken.where())
    return summary
