"""``infra.background.Background``: a call in a thread of its own, its answer or its exception
taken where it is needed."""

from __future__ import annotations

import threading

import pytest

from harness.infra.background import Background


def test_the_answer_comes_from_another_thread_and_a_failure_is_raised_by_result():
    main = threading.get_ident()
    asked = Background(lambda a, b: (a + b, threading.get_ident()), 2, 3)
    total, where = asked.result()
    assert total == 5 and where != main
    failed: Background[int] = Background(lambda: 1 // 0)
    with pytest.raises(ZeroDivisionError):
        failed.result()
