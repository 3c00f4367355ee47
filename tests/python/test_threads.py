"""Four Python threads running four GraphModules of one library at once give what a serial run
gives (the GIL is released during run)."""

import threading

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


def test_run_releases_the_gil():
    """While a thread is inside run(), another thread keeps executing Python: it counts only
    while the runner's flag says it is inside run(). Were the GIL held for the whole run, the
    counter would see the flag set for a few bytecodes at most."""
    from conftest import small_cnn

    mod, params = anvil.frontend.from_onnx(small_cnn(channels=64, size=96))
    m = graph_executor.GraphModule(anvil.build(mod, params=params)["default"](anvil.cpu()))
    m.set_input("input", np.zeros((1, 3, 96, 96), dtype="float32"))
    m.run()
    inside = [False]
    finished = threading.Event()

    def runner():
        for _ in range(40):
            inside[0] = True
            m.run()
            inside[0] = False
        finished.set()

    thread = threading.Thread(target=runner)
    ticks_inside = 0
    thread.start()
    while not finished.is_set():
        if inside[0]:
            ticks_inside += 1
    thread.join()
    assert ticks_inside > 1000, ticks_inside
