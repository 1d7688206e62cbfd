"""`sabot worker`: run a Celery worker for decision deadlines and scheduled audits; it also
directs the tournaments of the `--database` store (`workers.director`) unless `--no-director`,
and keeps the store's views caught up (`workers.views`, a thread) unless `--no-views` or
`--pool prefork` (`sabot serve`'s embedded worker runs threads).

    sabot worker                                  # embedded broker under .sabot/broker
    sabot worker --broker redis://127.0.0.1:6379/0 --concurrency 4
    sabot worker --beat --audit-every 600         # also schedule the store's audit

The broker is `--broker`, else `$SABOT_BROKER_URL`, else the embedded filesystem broker
(`workers.app`). `--database` names the worker's store: the one the scheduled audit
verifies and where it beats (`workers.heartbeat`: `/ready` says when no worker is alive);
the worker's tasks run on it (they carry ids only, never a URL). Before it starts, the
broker and the store must answer and the worker's vault key must open the seeds the store
sealed (else one line, exit 2).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from api.commands import SUMMARIES
from api.commands._common import add_database


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("worker", help=SUMMARIES["worker"])
    parser.add_argument("--broker", metavar="URL",
                        help="redis://host:port/db (default: $SABOT_BROKER_URL, else the "
                             "embedded filesystem broker under .sabot/broker)")
    add_database(parser)
    parser.add_argument("--concurrency", type=int, default=1, metavar="N",
                        help="tasks run at once (default: 1)")
    parser.add_argument("--pool", choices=["prefork", "threads", "solo"], default="prefork",
                        help="how tasks run: child processes, threads, or in the worker itself")
    parser.add_argument("--db-pool", type=int, default=None, metavar="N",
                        help="PostgreSQL connections per pool, plus one on overflow (default: "
                             "$SABOT_WORKER_DB_POOL, else --concurrency with --pool threads, "
                             "else 1)")
    parser.add_argument("--queue", default=None, help="the queue to consume (default: sabot)")
    parser.add_argument("--beat", action="store_true",
                        help="also run the scheduler of the periodic audit")
    parser.add_argument("--audit-every", type=float, default=None, metavar="SECONDS",
                        help="seconds between two scheduled audits (default: 3600)")
    parser.add_argument("--loglevel", default="INFO", help="DEBUG, INFO, WARNING, ERROR")
    parser.add_argument("--no-director", dest="director", action="store_false",
                        help="do not direct the store's tournaments (workers.director)")
    parser.add_argument("--no-views", dest="views", action="store_false",
                        help="do not keep the views caught up (projections.follower; "
                             "never with --pool prefork)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.concurrency < 1:
        raise SystemExit("sabot worker: --concurrency must be at least 1")
    if args.audit_every is not None and args.audit_every <= 0:
        raise SystemExit("sabot worker: --audit-every must be positive")
    pool = args.db_pool if args.db_pool is not None else (
        os.environ.get("SABOT_WORKER_DB_POOL") or (args.concurrency if args.pool == "threads"
                                                   else 1))
    if not str(pool).isdigit() or int(pool) < 1:
        raise SystemExit(f"sabot worker: the pool size must be a positive integer, not {pool!r}")
    from celery import signals

    from infra.settings import load_settings, redact_url
    from infra.store.checkpointer import begin_checkpoints
    from infra.store.opening import open_store
    from infra.store.reachability import check_broker
    from workers.app import AUDIT_EVERY, QUEUE, app, audit_schedule, broker_config
    from workers.heartbeat import check_vault_key, start_beating
    from workers.services import bound_pools

    bound_pools(int(pool))
    os.environ.setdefault("SABOT_CHECKPOINT_HOME", "1")  # the store's checkpoints are folded
    # here rather than in an API replica (`infra.store.checkpoint_lease`)
    check_broker(args.broker if args.broker is not None
                 else os.environ.get("SABOT_BROKER_URL", ""))
    settings = load_settings(database_url=args.database)
    store = open_store(settings.database_url)
    for home in (store, *store.homes().values()):  # the lease comes home now
        begin_checkpoints(home)
    check_vault_key(store.database, settings.secret_key, redact_url(settings.database_url))
    queue = args.queue or QUEUE
    start_beating(store.database, queue)
    os.environ["SABOT_DATABASE_URL"] = settings.database_url  # the tasks' store (its children too)
    if args.broker is not None:
        app.conf.update(broker_config(args.broker))
    app.conf.update(
        task_default_queue=queue,
        beat_schedule=audit_schedule(args.audit_every or AUDIT_EVERY),
    )
    argv = ["worker", f"--concurrency={args.concurrency}", f"--pool={args.pool}",
            f"--queues={queue}", f"--loglevel={args.loglevel}",
            "--without-mingle", "--without-gossip"]
    if args.beat:
        Path(app.conf.beat_schedule_filename).parent.mkdir(parents=True, exist_ok=True)
        argv.append("--beat")
        # celery runs the scheduler in a child process, which outlived a worker killed
        # outright: two schedulers then, sending every audit twice and corrupting the one
        # schedule file they share (the next scheduler to start died reading it)
        signals.beat_embedded_init.connect(lambda **_: _die_with_parent(), weak=False)
    if args.views and args.pool != "prefork":  # a busy thread in a process that forks its
        # children broke the redelivery of a killed child's task: prefork workers leave the
        # views to a threads worker or `sabot projections run --follow`
        from workers.views import start_following

        start_following(store)
    if args.director:
        from workers.director import start_when_ready

        start_when_ready(settings.database_url)
    # celery sets its worker's exit code to 1 when it stops on an "Unrecoverable error" (kombu
    # failing to re-open a Redis connection lost while it restored unacknowledged messages,
    # for one), but `worker_main` returns nothing: read it as the worker shuts down
    from kombu.exceptions import OperationalError

    codes: list[int | None] = []
    signals.worker_shutdown.connect(lambda sender, **_: codes.append(sender.exitcode),
                                    weak=False)
    app.worker_main(argv)
    if any(codes):
        raise OperationalError("celery stopped the worker on an error it could not recover "
                               "from (the log above names it)")
    return 0


PR_SET_PDEATHSIG = 1  # prctl(2)


def _die_with_parent() -> None:
    """In the child before it runs the worker: be sent SIGTERM when the parent dies, however
    it dies (uvicorn re-raises the SIGTERM it caught, a demo may be killed), so that no
    embedded worker outlives its `sabot serve` or `sabot demo` (Linux; elsewhere a no-op)."""
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@contextmanager
def running_worker(broker: str, database: str, log: Path, *options: str,
                   env: dict[str, str] | None = None,
                   cwd: Path | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """A `sabot worker` process (its director on `database`) for as long as the block runs,
    its log (JSON lines) appended to `log`; stopped at the end (killed if it lingers).
    `sabot demo` and `sabot serve` on the embedded broker start one."""
    env = {**os.environ, **(env or {}), "SABOT_BROKER_URL": broker}
    command = [sys.executable, "-m", "api.cli", "worker", "--database", database,
               *(options or ("--pool", "threads", "--concurrency", "2", "--loglevel", "INFO"))]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        worker = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=out,
                                  preexec_fn=_die_with_parent)
        try:
            yield worker
        finally:
            worker.terminate()
            try:
                worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                worker.kill()
