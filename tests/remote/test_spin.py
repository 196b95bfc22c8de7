"""The poll-before-blocking of both remote sides: it polls while messages come quickly, and stops when they do not."""

import pytest
import zmq

from ding_env.remote.spin import MISSES_BEFORE_BLOCKING, RETRY_EVERY, Spinner


@pytest.fixture
def pair():
    """A connected (sender, receiver) pair of sockets over loopback, closed after the test."""
    with zmq.Context() as context:
        sender, receiver = context.socket(zmq.PAIR), context.socket(zmq.PAIR)
        port = receiver.bind_to_random_port("tcp://127.0.0.1")
        sender.connect(f"tcp://127.0.0.1:{port}")
        yield sender, receiver
        sender.close(linger=0)
        receiver.close(linger=0)


def test_a_waiting_message_is_found_by_polling_while_messages_come_quickly(pair):
    sender, receiver = pair
    spinner = Spinner(seconds=1.0)  # returns as soon as the message is there
    for round_ in range(2 * MISSES_BEFORE_BLOCKING):
        sender.send(b"%d" % round_)
        assert spinner.arrived(receiver)
        assert receiver.recv() == b"%d" % round_


def test_after_misses_in_a_row_the_spinner_blocks_at_once_and_polls_again_now_and_then(pair):
    sender, receiver = pair
    spinner = Spinner(seconds=0.002)
    for _ in range(MISSES_BEFORE_BLOCKING):  # nothing comes within the polling time
        assert not spinner.arrived(receiver)
    sender.send(b"waiting")
    assert receiver.poll(1000)  # the message is there...
    # ...but the spinner no longer polls: the caller blocks (and gets it at once)...
    assert [spinner.arrived(receiver) for _ in range(RETRY_EVERY - 1)] == [False] * (RETRY_EVERY - 1)
    # ...until its next try, which finds it and brings polling back.
    assert spinner.arrived(receiver)
    assert receiver.recv() == b"waiting"
    sender.send(b"next")
    assert receiver.poll(1000)
    assert spinner.arrived(receiver)  # polling again: the waiting message is found


def test_a_poll_cut_short_by_the_callers_limit_is_not_a_miss(pair):
    sender, receiver = pair
    spinner = Spinner(seconds=0.05)
    for _ in range(2 * MISSES_BEFORE_BLOCKING):
        assert not spinner.arrived(receiver, limit=0.0005)
    sender.send(b"soon")
    assert receiver.poll(1000)
    assert spinner.arrived(receiver)  # still polling: the short waits were the caller's, not misses
