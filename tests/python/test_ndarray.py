"""anvil.nd: arrays to and from numpy (copies) and DLPack (shared memory, both ways)."""

import numpy as np
import pytest
import torch

import anvil


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint8", "int32",
                                   "int64", "bool"])
def test_array_round_trips_through_numpy(dtype, rng):
    source = (rng.uniform(-50, 50, size=(2, 3, 4))).astype(dtype)
    a = anvil.nd.array(source)
    assert a.shape == (2, 3, 4)
    assert a.dtype == dtype
    back = a.numpy()
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, source)
    # Both are copies: changing one leaves the others alone.
    original = source.copy()
    source.flat[0] = ~source.flat[0] if dtype == "bool" else source.flat[0] + 1
    back.flat[1] = ~back.flat[1] if dtype == "bool" else back.flat[1] + 1
    np.testing.assert_array_equal(a.numpy(), original)


def test_array_of_a_strided_view_and_a_scalar():
    base = np.arange(24, dtype="float32").reshape(4, 6)
    np.testing.assert_array_equal(anvil.nd.array(base[:, ::2]).numpy(), base[:, ::2])
    np.testing.assert_array_equal(anvil.nd.array(np.float32(3.5)).numpy(), np.float32(3.5))
    np.testing.assert_array_equal(anvil.nd.array([[1, 2], [3, 4]]).numpy(), [[1, 2], [3, 4]])


def test_empty_and_copyfrom(rng):
    a = anvil.nd.empty((3, 5), "int32")
    assert a.shape == (3, 5) and a.dtype == "int32"
    values = rng.integers(-9, 9, size=(3, 5)).astype("int32")
    a.copyfrom(values)
    np.testing.assert_array_equal(a.numpy(), values)
    with pytest.raises(anvil.AnvilError):
        a.copyfrom(values.astype("float32"))


def test_numpy_shares_an_ndarray_by_dlpack_and_array_interface():
    a = anvil.nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    view = np.from_dlpack(a)  # numpy 1.x marks DLPack imports read-only
    assert view.ctypes.data == a.data_ptr
    a.copyfrom(np.full((2, 3), -1, dtype="float32"))  # a write through anvil is seen by numpy
    assert view[0, 0] == -1.0
    writable = np.asarray(a)  # __array_interface__: a writable view, no copy
    assert writable.ctypes.data == a.data_ptr
    writable[1, 2] = 42.0  # a write through numpy is seen by anvil
    assert a.numpy()[1, 2] == 42.0 and view[1, 2] == 42.0
    del a
    writable[0, 1] = 5.0  # the view keeps the memory alive
    assert writable[0, 1] == 5.0


def test_ndarray_shares_a_numpy_array_by_dlpack():
    source = np.arange(12, dtype="int64").reshape(3, 4)
    a = anvil.nd.from_dlpack(source)
    assert a.data_ptr == source.ctypes.data
    source[2, 3] = 100
    assert a.numpy()[2, 3] == 100
    np.asarray(a)[0, 0] = -5
    assert source[0, 0] == -5


def test_torch_shares_both_ways():
    t = torch.arange(10, dtype=torch.float32)
    a = anvil.nd.from_dlpack(t)
    assert a.data_ptr == t.data_ptr()
    t[3] = 33.0
    assert a.numpy()[3] == 33.0
    back = torch.from_dlpack(a)
    assert back.data_ptr() == t.data_ptr()
    back[4] = 44.0
    assert t[4].item() == 44.0

    b = anvil.nd.array(np.ones((2, 2), dtype="float32"))
    tb = torch.from_dlpack(b)
    assert tb.data_ptr() == b.data_ptr
    tb.mul_(3)
    np.testing.assert_array_equal(b.numpy(), np.full((2, 2), 3, dtype="float32"))


def test_shared_memory_outlives_the_producer():
    t = torch.arange(5, dtype=torch.int32)
    a = anvil.nd.from_dlpack(t)
    del t
    np.testing.assert_array_equal(a.numpy(), np.arange(5, dtype="int32"))
    view = np.from_dlpack(anvil.nd.array(np.arange(4, dtype="float32")))
    np.testing.assert_array_equal(view, np.arange(4, dtype="float32"))


def test_a_capsule_is_consumed_once():
    capsule = np.arange(3, dtype="float32").__dlpack__()
    anvil.nd.from_dlpack(capsule)
    with pytest.raises(anvil.AnvilError, match="already consumed"):
        anvil.nd.from_dlpack(capsule)


def test_bad_dlpack_sources_and_dtypes():
    with pytest.raises(anvil.AnvilError, match="__dlpack__"):
        anvil.nd.from_dlpack([1, 2, 3])
    with pytest.raises(anvil.AnvilError, match="not float64"):
        anvil.nd.array(np.zeros(2, dtype="float32"), dtype="float64")
    with pytest.raises(anvil.AnvilError, match="unknown|dtype"):
        anvil.nd.empty((2,), "float33")


def test_repr_and_device():
    a = anvil.nd.empty((1, 2), "float32")
    assert "shape=(1, 2)" in repr(a) and "float32" in repr(a)
    assert a.device == anvil.cpu(0)
    assert a.__dlpack_device__() == (1, 0)
