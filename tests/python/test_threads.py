"""Four Python threads running four GraphModules of one library at once give what a serial run
gives (the GIL is released during run)."""

import threading
import time

import numpy as np

import anvil
from anvil.contrib import graph_executor


def test_four_threads_match_a_serial_run(built_cnn, rng):
    lib = built_cnn[1]
    inputs = [rng.uniform(-1, 1, size=(1, 3, 16, 16)).astype("float32") for _ in range(4)]
    serial = []
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    for x in inputs:
        m.run(input=x)
        serial.append(m.get_output(0).numpy())

    modules = [graph_executor.GraphModule(lib["default"](anvil.cpu())) for _ in range(4)]
    results = [[] for _ in range(4)]
    errors = []
    start = threading.Barrier(4)

    def work(i):
        try:
            start.wait()
            for _ in range(25):
                modules[i].run(input=inputs[i])
                results[i].append(modules[i].get_output(0).numpy())
        except Exception as e:  # reported below; a thread's exception is otherwise lost
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(4):
        assert len(results[i]) == 25
        for r in results[i]:
            np.testing.assert_array_equal(r, serial[i])


def test_run_releases_the_gil(built_cnn):
    """While one thread runs the model in a loop, another keeps executing Python."""
    m = graph_executor.GraphModule(built_cnn[1]["default"](anvil.cpu()))
    m.set_input("input", np.zeros((1, 3, 16, 16), dtype="float32"))
    stop = threading.Event()
    ticks = [0]

    def count():
        while not stop.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    deadline = time.time() + 0.5
    runs = 0
    while time.time() < deadline:
        m.run()
        runs += 1
    stop.set()
    counter.join()
    assert runs > 0 and ticks[0] > 0
