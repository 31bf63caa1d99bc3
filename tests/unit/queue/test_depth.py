import pytest

from services.queue.depth import DepthGauge


def test_every_worker_gets_a_batch_until_both_times_are_known() -> None:
    gauge = DepthGauge()
    assert gauge.depth(8) == 8
    gauge.answered(0.4)
    assert gauge.depth(8) == 8


def test_as_many_batches_out_as_keep_the_queue_deciding() -> None:
    gauge = DepthGauge()
    gauge.answered(0.3)
    gauge.decided(0.1)
    assert gauge.depth(8) == 4  # three round trips' worth decided meanwhile, plus the one decided
    assert gauge.depth(3) == 3
    slow_queue = DepthGauge()
    slow_queue.answered(0.05)
    slow_queue.decided(0.2)
    assert slow_queue.depth(8) == 2  # one answered while one is decided


def test_one_or_two_workers_keep_two_batches_out() -> None:
    gauge = DepthGauge()
    assert gauge.depth(1) == 2  # one worker: the next request waits at it as it answers one
    gauge.answered(0.01)
    gauge.decided(1.0)
    assert gauge.depth(1) == 2
    assert gauge.depth(2) == 2


def test_the_times_are_moving_averages() -> None:
    gauge = DepthGauge()
    gauge.answered(1.0)
    gauge.answered(2.0)
    assert gauge.out_s == pytest.approx(1.2)
    gauge.decided(0.5)
    assert gauge.decide_s == 0.5


def test_never_more_batches_out_than_the_bound() -> None:
    gauge = DepthGauge(most=2)
    assert gauge.depth(8) == 2  # before the times are known too
    gauge.answered(0.3)
    gauge.decided(0.1)
    assert gauge.depth(8) == 2
    assert gauge.depth(1) == 2
    assert DepthGauge(most=1).depth(1) == 1
    assert DepthGauge(most=6).depth(8) == 6
