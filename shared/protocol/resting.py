"""When a filter worker rests, and how the queue keeps the workers it sends batches to awake.

A worker polls `filter-requests` once a fetch wait (the broker holds an empty fetch for all of
it), ten times a second. The queue sends batches to at most its first `most` workers
(`services.queue.dispatch`); on a machine of few cores the others are spares, sent work only when
one of those first stays silent, and each spare's polling cost the machine as much as a worker's
share of the work it never got (measured: `docs/architecture.md`, "Spare workers rest").

So a worker rests: it fetches nothing for `REST_PACE_S`, looks once, and rests again until a
request comes. One never sent a request rests `SPARE_AFTER_S` after it starts: a spare. One that
was sent requests rests once none came for `REST_AFTER_S`. The queue sends an empty request to
each worker it may use that it never sent one, at once, and while it is idle to each it sent
nothing for `KEEP_AWAKE_S`: those never rest, so a pod created on a quiet cluster waits for no
rest to end, and an idle cluster writes one such request a worker a minute (about a kilobyte with
its answer), not one a second. A spare's first batch waits up to about two rests more, after the
queue has waited its gather timeout for the silent worker; so does the first batch after a
rebalance gave the partitions of a worker the queue used to a resting one (the queue learns who
owns them from the answers, so it primes the new owner only when it is due to prime the old).
"""

from __future__ import annotations

REST_PACE_S = 1.0
"""How long a resting worker fetches nothing between two looks."""

SPARE_AFTER_S = 5.0
"""A worker sent no request since it started rests this long after it started."""

REST_AFTER_S = 180.0
"""A worker sent requests rests once none came for this long."""

KEEP_AWAKE_S = 60.0
"""An idle queue sends an empty request to a worker it may use that it sent nothing for this long
(a third of `REST_AFTER_S`: its loop may be busy deciding when one is due)."""
