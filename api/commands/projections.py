"""`sabot projections`: run, rebuild and inspect the read views of the store.

* `rebuild [NAME]`: drop a view (every view without NAME) and rebuild it from the first event,
  with a progress bar on standard error;
* `run [NAME] [--follow]`: bring views to the head of the store; with `--follow`, keep them
  there (`projections.follower`, looking at the head every `--interval` seconds) until
  interrupted: the views' runner of an installation whose workers run with `--no-views`;
* `status [--json]`: each view's position, the store's head, the events it is behind and the
  age of the last event it applied; a view stopped by an event it cannot apply is named with
  the event and the error (exit 2).

A view that meets an event it cannot apply stops there alone: `run` and `rebuild` go on with
the other views, print one line for it and exit 2.
"""

from __future__ import annotations

import argparse
import sys
import time

from rich.progress import Progress

from api.commands import SUMMARIES
from api.commands._common import add_database, progress
from api.commands._views import EXIT_STORE, ViewsUnavailable, print_json, views
from projections.follower import INTERVAL, Follower
from projections.registry import NAMES
from projections.runner import Progress as Moved
from projections.runner import Runner
from projections.view import ProjectionFailed


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("projections", help=SUMMARIES["projections"])
    actions = parser.add_subparsers(dest="projections_action", required=True, metavar="ACTION")
    rebuild = actions.add_parser("rebuild", help="drop a view and rebuild it from the store")
    rebuild.add_argument("name", nargs="?", choices=NAMES, help="one view (default: all)")
    rebuild.add_argument("--json", action="store_true", help="no progress bar; a JSON summary")
    add_database(rebuild)
    run_views = actions.add_parser("run", help="bring views to the head of the store")
    run_views.add_argument("name", nargs="?", choices=NAMES, help="one view (default: all)")
    run_views.add_argument("--follow", action="store_true", help="keep polling the store")
    run_views.add_argument("--interval", type=float, default=INTERVAL, metavar="SECONDS",
                           help=f"polling interval with --follow (default: {INTERVAL})")
    add_database(run_views)
    status = actions.add_parser("status", help="each view's position and lag")
    status.add_argument("--json", action="store_true", help="print JSON")
    add_database(status)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        with views(args.database) as runner:
            match args.projections_action:
                case "rebuild":
                    return _rebuild(runner, args)
                case "run":
                    return _run(runner, args)
                case _:
                    return _status(runner, args)
    except ViewsUnavailable as error:
        print(f"sabot: {error}", file=sys.stderr)
        return EXIT_STORE


def _rebuild(runner: Runner, args: argparse.Namespace) -> int:
    """The views dropped and run again together (each event read and decoded once); the
    figures of each are its events over the time of the whole rebuild."""
    names = [args.name] if args.name else list(NAMES)
    started = time.perf_counter()
    label = f"rebuild {args.name}" if args.name else "rebuild every view"
    with progress(label, max(runner.head(), 1), quiet=args.json) as bar:
        applied, stopped = runner.rebuild_together(names, progress=_showing(bar))
    seconds = time.perf_counter() - started
    done = {name: {"events": count, "seconds": round(seconds, 3),
                   "events_per_second": round(count / seconds) if seconds else None}
            for name, count in applied.items() if name not in stopped}
    if args.json:
        print_json(done)
    else:
        for name, figures in done.items():
            print(f"{name:>10}: {figures['events']} events in {figures['seconds']} s "
                  f"({figures['events_per_second']} events/s)")
    return _report(list(stopped.values()))


def _report(stopped: list[ProjectionFailed]) -> int:
    """One line a view stopped by an event it cannot apply (the other views went on)."""
    for error in stopped:
        print(f"sabot: {error}", file=sys.stderr)
    return EXIT_STORE if stopped else 0


def _showing(bar: Progress) -> Moved:
    def moved(position: int, head: int) -> None:
        bar.update(bar.task_ids[0], completed=position, total=head)

    return moved


def _run(runner: Runner, args: argparse.Namespace) -> int:
    names = [args.name] if args.name else list(NAMES)
    if args.follow:  # until interrupted: the views' runner of an installation without workers
        Follower(runner, names, interval=args.interval, ran=_applied).run()
        return 0
    applied, failed = runner.catch_up_together(names)
    _applied(applied, failed)
    return _report(list(failed.values()))


def _applied(applied: dict[str, int], _: dict[str, ProjectionFailed]) -> None:
    for name, count in applied.items():
        if count:
            print(f"{name}: {count} events applied", file=sys.stderr)


def _status(runner: Runner, args: argparse.Namespace) -> int:
    lags = [runner.lag(name) for name in NAMES]
    stopped = any(lag.stopped_at is not None for lag in lags)
    if args.json:
        print_json(lags)
        return EXIT_STORE if stopped else 0
    print(f"{'projection':<12}{'position':>10}{'head':>10}{'behind':>8}  last event applied")
    for lag in lags:
        age = "none yet" if lag.seconds is None else f"{lag.seconds:.1f} s ago"
        if lag.stopped_at is not None:
            age += f"; STOPPED at event {lag.stopped_at}: {lag.error}"
        print(f"{lag.projection:<12}{lag.position:>10}{lag.head:>10}{lag.behind:>8}  {age}")
    return EXIT_STORE if stopped else 0

