"""`berth bench`: scheduler throughput and latency on scheduler_perf-style workloads."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from shared.adapters.input_files import load_files
from shared.errors import InvalidInput
from shared.workloads import WORKLOADS, generate

from .bench.plot import NO_PLOT, PairedStep, plot_scaling, plot_throughput
from .bench.stats import MEDIAN_CONFIDENCE, NEVER_SLOWER, median, median_run, paired_interval, paired_steps
from .client import CliError, run_guarded
from .machine import summary
from .services import check_filter_workers, check_queues, filter_workers_problem, most_queues, up_options


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "bench", help="measure scheduling throughput and latency",
        description="Schedules a generated workload and reports pods/s, attempt and end-to-end latency "
                    "percentiles, CPU and memory, with a throughput-over-time plot. Fails (exit 1) if any "
                    "node is over-committed or any pod is lost.")
    add_workload_args(p, pods_help="measured pods")
    p.add_argument("--mode", choices=("inprocess", "cluster"), default=None,
                   help="inprocess (the default): the core alone; cluster: every service as a process on the "
                        "embedded stack (or KAFKA_BOOTSTRAP_SERVERS / DATABASE_URL), pods fed through Kafka; "
                        "--scale-sweep is cluster mode")
    p.add_argument("--filter-workers", type=int, default=None, metavar="K",
                   help="filter replicas (cluster mode; default as `berth up`: one per four cores, one to four)")
    p.add_argument("--queues", type=_positive, default=None, metavar="Q",
                   help="queues sharing the cluster, each scheduling a share of the pods (cluster mode; default as "
                        "`berth up`: one per filter worker, at most four, on more than three cores; with "
                        "--scale-sweep, at each count the most up to Q that have whole filter workers each)")
    p.add_argument("--scale-sweep", metavar="K,K,...", type=_worker_counts,
                   help="cluster mode once per filter-worker count (e.g. 1,2,4,8): pods/s, parallel efficiency "
                        "against the first count, a JSON result and a scaling-curve PNG")
    p.add_argument("--rounds", type=_positive, default=1, metavar="N",
                   help="with --scale-sweep: run the counts in turn N times (1,2,4,8,1,2,4,8,...) and report, "
                        "per count, the run of median pods/s, with the range of all (default 1)")
    p.add_argument("--logs", metavar="DIR", help="keep each service's log in DIR (cluster mode)")
    p.add_argument("--record", metavar="FILE", help="write the run's event log to FILE as JSON Lines, for "
                   "`berth replay --source FILE` (cluster mode)")
    p.add_argument("--timeout", type=float, default=1800.0, metavar="S", help="give up after S seconds (cluster mode)")
    p.add_argument("--churn-interval", type=float, default=None, metavar="S",
                   help="seconds between the churn's pods (PreemptionAsync; default upstream's 0.2)")
    p.add_argument("--config", metavar="FILE",
                   help="a KubeSchedulerConfiguration (profiles, percentageOfNodesToScore, ...), as for simulate; "
                        "in cluster mode every scheduling service runs with it")
    p.add_argument("--seed", type=int, default=0,
                   help="the workload's and the tie-breaks' seed (default 0)")
    p.add_argument("--out-dir", default="bench-results", help="where the JSON result and the plot go")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text",
                   help="text for people (default) or json")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show progress on stderr (default: when it is a terminal)")
    p.set_defaults(run=run_guarded(run))


def add_workload_args(p: argparse.ArgumentParser, *, pods_help: str) -> None:
    """--workload, --nodes and --pods, as bench and chaos take them (5,000 nodes, 10,000 pods)."""
    p.add_argument("--workload", choices=sorted(WORKLOADS), default="SchedulingBasic",
                   help="the scheduler_perf workload (default SchedulingBasic)")
    p.add_argument("--nodes", type=int, default=5000, help="nodes (default 5000)")
    p.add_argument("--pods", type=int, default=10000, help=f"{pods_help} (default 10000)")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _worker_counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected worker counts like 1,2,4,8, got {text!r}") from None
    if not counts or min(counts) < 1 or counts != sorted(set(counts)):
        raise argparse.ArgumentTypeError(f"expected increasing worker counts of at least 1, got {text!r}")
    problem = filter_workers_problem(max(counts))
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return counts


def run(args: argparse.Namespace) -> int:
    options = up_options(args.filter_workers, queues=args.queues)
    if args.mode == "cluster" and not args.scale_sweep:
        check_filter_workers(options.filter_workers)
        check_queues(options.queues, options.filter_workers)
    elif args.queues is not None and args.mode != "cluster" and not args.scale_sweep:
        raise CliError("--queues shares the cluster among queues: give --mode cluster", 2)
    workload = generate(args.workload, args.nodes, args.pods, args.seed)
    config_path = Path(args.config).resolve() if args.config else None
    if config_path is not None:
        workload = with_config(workload, config_path)
    if args.churn_interval is not None:
        if args.churn_interval <= 0:
            raise CliError(f"--churn-interval must be above 0 seconds, got {args.churn_interval}", 2)
        workload = replace(workload, churn_interval_s=args.churn_interval)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    if args.rounds > 1 and not args.scale_sweep:
        raise CliError("--rounds repeats a --scale-sweep: give one", 2)
    if args.scale_sweep:
        if args.record:
            raise CliError("--record records one run: it cannot be combined with --scale-sweep", 2)
        if args.mode == "inprocess":
            raise CliError("--scale-sweep measures the cluster's filter workers: not with --mode inprocess", 2)
        return _sweep(args, workload, progress, config_path)
    if args.mode == "cluster":
        from .bench.cluster import run_cluster

        if args.record:  # made before the run, which would otherwise end unable to write it
            Path(args.record).parent.mkdir(parents=True, exist_ok=True)

        result = run_cluster(workload, options=options, progress=progress, timeout_s=args.timeout,
                             logs=Path(args.logs) if args.logs else None,
                             record=Path(args.record) if args.record else None, config=config_path)
    else:
        from .bench.inprocess import run_inprocess  # the core and its extender clients: only when it runs

        result = run_inprocess(workload, args.seed, progress)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    workers = f"-{result.filter_workers}w" if result.filter_workers else ""
    workers += f"{result.queues}q" if result.queues and result.queues > 1 else ""
    stem = f"{result.workload}-{result.mode}{workers}-{result.nodes}n-{result.pods}p"
    data = asdict(result)
    (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n")
    plot = plot_throughput(result.throughput, f"{result.workload} ({result.mode}, {result.nodes} nodes)",
                           out_dir / f"{stem}.png")
    if args.output == "json":
        print(json.dumps({k: v for k, v in data.items() if k != "throughput"}))
    else:
        workers = f", {result.filter_workers} filter workers" if result.filter_workers else ""
        workers += f", {result.queues} queues" if result.queues and result.queues > 1 else ""
        if result.propose and result.propose != "no":
            workers += f", proposing {result.propose} ({result.proposed_share or 0:.0%} of pods)"
        workers += f", at most {result.pipeline_most} batches out" if result.pipeline_most else ""
        workers += f" to {result.workers_most} busy" if result.workers_most else ""
        print(f"{result.workload} {result.mode}: {result.nodes} nodes, {result.pods} pods{workers}")
        print(f"  machine         {summary(result.machine)}")
        print(f"  throughput      {result.pods_per_second:,.1f} pods/s "
              f"({result.bound} bound, {result.pending} pending, {result.wall_seconds:.2f} s)")
        print(f"  attempt latency p50 {result.attempt_latency_p50_ms:.2f} ms, "
              f"p99 {result.attempt_latency_p99_ms:.2f} ms")
        print(f"  end-to-end      p50 {result.e2e_latency_p50_ms:.1f} ms, p99 {result.e2e_latency_p99_ms:.1f} ms")
        if result.sent_per_pod:
            print(f"  sent to workers {result.sent_per_pod:.2f} pods per pod (above 1: tried again)")
        if result.walked_again_per_pod:
            print(f"  walked again    {result.walked_again_per_pod:.1%} of pods, in the queue (their candidates taken)")
        if spread := result.pods_per_node:
            print(f"  pods per node   min {spread['min']:.0f}, median {spread['median']:.0f}, p99 {spread['p99']:.0f}, "
                  f"max {spread['max']:.0f} (every node, the pods running before too)")
        if result.churn_submitted:
            print(f"  churn           {result.churn_submitted} pods submitted while measuring (not measured)")
        per_service = ", ".join(f"{k} {v:.1f}" for k, v in sorted(result.cpu_seconds.items()))
        print(f"  cpu {sum(result.cpu_seconds.values()):.2f} s ({per_service}), "
              f"peak memory {result.peak_memory_mb:.0f} MB")
        print(f"  cpu per pod     {_per_pod(result.cpu_ms_per_pod)}")
        if result.queue_busy is not None:
            print(f"  queue busy      {result.queue_busy:.0%} of the run (one process: near 100%, it bounds pods/s)")
        if result.queue_waited is not None:
            print(f"  queue waited    {result.queue_waited:.0%} of the run off the CPU, its next batch at the workers")
        print(f"  result {out_dir / (stem + '.json')}" + (f", plot {plot}" if plot else f"; {NO_PLOT}"))
    for problem in result.problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if result.problems else 0


def _per_pod(cpu_ms: dict[str, float]) -> str:
    parts = ", ".join(f"{k} {v:.3f}" for k, v in sorted(cpu_ms.items()) if k != "total")
    return f"{cpu_ms.get('total', 0.0):.3f} ms ({parts})"


def with_config(workload: Any, path: Path) -> Any:
    """The workload scheduled under the KubeSchedulerConfiguration in `path`."""
    try:
        loaded = load_files([str(path)])
    except InvalidInput as exc:
        raise CliError(str(exc), 2) from None
    if loaded.config is None:
        raise CliError(f"{path}: no KubeSchedulerConfiguration in it", 2)
    return replace(workload, cluster=replace(workload.cluster, config=loaded.config))


def _sweep(args: argparse.Namespace, workload: Any, progress: bool, config_path: Path | None) -> int:
    """The cluster bench at each worker count, in turn (each on a fresh stack), `--rounds` times."""
    from .bench.cluster import run_cluster

    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[int, list[dict[str, Any]]] = {k: [] for k in args.scale_sweep}
    problems: list[str] = []
    # Every count's queues checked before the first run: a sweep does not stop half way.
    options = {k: up_options(k, queues=None if args.queues is None else most_queues(args.queues, k))
               for k in args.scale_sweep}
    for k, o in options.items():
        check_queues(o.queues, k)
    for round_ in range(1, args.rounds + 1):
        for k in args.scale_sweep:
            if progress:
                print(f"scale sweep: {k} filter worker(s)" + (f", round {round_} of {args.rounds}"
                                                              if args.rounds > 1 else ""), file=sys.stderr)
            logs = Path(args.logs) / (f"{k}w" if args.rounds == 1 else f"{k}w-{round_}") if args.logs else None
            result = run_cluster(workload, options=options[k], progress=progress,
                                 timeout_s=args.timeout, logs=logs, config=config_path)
            problems += [f"{k} workers: {p}" for p in result.problems]
            runs[k].append({"filter_workers": k, "queues": options[k].queues, "propose": result.propose,
                            "proposed_share": result.proposed_share, "pipeline_most": result.pipeline_most,
                            "workers_most": result.workers_most, "sent_per_pod": result.sent_per_pod,
                            "walked_again_per_pod": result.walked_again_per_pod,
                            "pods_per_second": result.pods_per_second,
                            "e2e_latency_p99_ms": result.e2e_latency_p99_ms,
                            "cpu_seconds": sum(result.cpu_seconds.values()),
                            "cpu_ms_per_pod": result.cpu_ms_per_pod, "queue_busy": result.queue_busy,
                            "queue_waited": result.queue_waited, "pods_per_node": result.pods_per_node})
    points = sweep_points(runs)
    stem = f"{workload.name}-cluster-sweep-{args.nodes}n-{args.pods}p" + (f"-{args.queues}q" if args.queues else "")
    machine = result.machine  # every count ran on this machine: the last run's description
    swept = {"workload": workload.name, "mode": "cluster", "nodes": args.nodes, "pods": args.pods,
             "machine": machine, "rounds": args.rounds, "sweep": points, "problems": problems}
    (out_dir / f"{stem}.json").write_text(json.dumps(swept, indent=2) + "\n")
    title = f"{workload.name}, {args.nodes} nodes: filter-worker scaling"
    proposing = [str(p["filter_workers"]) for p in points if p["proposed_share"]]
    if 0 < len(proposing) < len(points):  # each count ran as `berth up` runs it
        title += f" (proposing: {', '.join(proposing)} workers)"
    if any(p["queues"] > 1 for p in points):
        title += f"\nqueues: {', '.join(str(p['queues']) for p in points)}"
    plot = plot_sweep(points, title, out_dir / f"{stem}.png", rounds=args.rounds)
    if args.output == "json":
        print(json.dumps(swept))
    else:
        print(f"{workload.name} cluster scale sweep: {args.nodes} nodes, {args.pods} pods")
        print(f"  machine  {summary(machine)}")
        for line in _sweep_table(points, args.rounds):
            print(line)
        print(f"  result {out_dir / (stem + '.json')}" + (f", plot {plot}" if plot else f"; {NO_PLOT}"))
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


def sweep_points(runs: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each worker count's point (its run of median pods/s, `median_run`) with its speedup and
    efficiency against the first count, its step against the count before, and that step paired
    round by round (`runs`: each count's runs in round order, counts in sweep order)."""
    points = [median_run(those) for those in runs.values()]
    base = points[0]
    for before, point in zip([None, *points], points):
        speedup = point["pods_per_second"] / base["pods_per_second"] if base["pods_per_second"] else 0.0
        point["speedup"] = speedup
        point["efficiency"] = speedup * base["filter_workers"] / point["filter_workers"]
        # Against the count before: more workers should never give fewer pods/s.
        point["step"] = (point["pods_per_second"] / before["pods_per_second"]
                         if before is not None and before["pods_per_second"] else None)
        pairs = (paired_steps(runs[before["filter_workers"]], runs[point["filter_workers"]])
                 if before is not None else [])
        point["paired_steps"], point["paired_step"] = pairs, median(pairs)
        point["paired_interval"] = paired_interval(pairs)
    return points


def _sweep_table(points: list[dict[str, Any]], rounds: int) -> list[str]:
    """The sweep's table for people, with its footnote."""
    lines = []
    if rounds > 1:
        lines.append(f"  each count's run of median pods/s of {rounds} rounds; range: all its runs' pods/s")
    ranges = f"  {'range':>13}" if rounds > 1 else ""
    within = f"  {'paired range':>15}" if rounds > 1 else ""
    lines.append(f"  {'workers':>7}  {'queues':>6}  {'propose':>12}  {'pods/s':>9}{ranges}  {'speedup':>7}  "
                 f"{'step':>5}  {'paired':>6}{within}  {'efficiency':>10}  "
                 f"{'e2e p99':>9}  {'cpu ms/pod':>10}  {'queue':>6}  {'busy':>5}  {'waited':>6}  {'filter':>6}  "
                 f"{'sent/pod':>8}")
    for p in points:
        ms = p["cpu_ms_per_pod"]
        proposed = f"{p['propose']} {p['proposed_share'] or 0:.0%}"
        each = p["rounds_pods_per_second"]
        spread = f"  {f'{min(each):.0f}-{max(each):.0f}':>13}" if rounds > 1 else ""
        interval = p["paired_interval"]
        paired_range = ("-" if interval is None
                        else f"{interval['low']:.2f}-{interval['high']:.2f} {interval['confidence']:.0%}")
        paired_range = f"  {paired_range:>15}" if rounds > 1 else ""
        lines.append(f"  {p['filter_workers']:>7}  {p['queues']:>6}  {proposed:>12}  "
                     f"{p['pods_per_second']:>9.1f}{spread}  "
                     f"{p['speedup']:>7.2f}  {'-' if p['step'] is None else format(p['step'], '.2f'):>5}  "
                     f"{'-' if p['paired_step'] is None else format(p['paired_step'], '.2f'):>6}{paired_range}  "
                     f"{p['efficiency']:>10.2f}  {p['e2e_latency_p99_ms'] / 1000:>8.1f}s  "
                     f"{ms.get('total', 0.0):>10.3f}  {ms.get('queue', 0.0):>6.3f}  {p['queue_busy'] or 0:>5.0%}  "
                     f"{p['queue_waited'] or 0:>6.0%}  {ms.get('filter', 0.0):>6.3f}  {p['sent_per_pod']:>8.2f}")
    lines.append(_sweep_footnote(rounds > 1))
    return lines


def plot_sweep(points: list[dict[str, Any]], title: str, path: Path, *, rounds: int) -> Path | None:
    """The sweep's plot from its points (as its JSON result holds them); with more than one round,
    each count's range of pods/s and each step paired round by round."""
    steps = [PairedStep(f"{p['filter_workers']}/{before['filter_workers']}", p["paired_steps"])
             for before, p in zip(points, points[1:]) if len(p["paired_steps"]) > 1]
    return plot_scaling([(p["filter_workers"], p["pods_per_second"], p["cpu_ms_per_pod"]) for p in points],
                        title, path, ranges=[p["rounds_pods_per_second"] for p in points] if rounds > 1 else (),
                        steps=steps if rounds > 1 else ())


def _sweep_footnote(ranged: bool) -> str:
    """What the sweep table's columns mean; `ranged`: it shows paired ranges."""
    within = ("paired range: where the median paired step lies and how sure that is, from the rounds' pairs "
              f"alone (at {MEDIAN_CONFIDENCE:.0%} or more, a range wholly below {NEVER_SLOWER}: the step lost pods/s "
              "beyond the machine's noise); " if ranged else "")
    return (f"  step: pods/s against the count before (below {NEVER_SLOWER}: more workers gave fewer pods/s); "
            "paired: the median, over the rounds, of pods/s against the count before in the same round "
            f"(run just before it, so a machine's slower spells cancel); {within}"
            "busy: the queue's CPU seconds per second of the run (one process: near 100%, it bounds pods/s); "
            "waited: its share of the run off the CPU with its next batch at the workers")
