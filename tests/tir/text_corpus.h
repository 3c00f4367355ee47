// Programs in the tensor IR text shared by the parser, round-trip and
// bad-input tests: the MLC examples plus one program per language feature, so
// that together they hold every node kind in scheduled and lowered form.
#pragma once

#include <string>
#include <vector>

namespace anvil::tir::testing {

// The MLC course's linear layer, exactly as TVMScript users write it.
inline const char* const kLinear0 = R"(@T.prim_func
def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
    T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
    m, n = T.int64(), T.int64()
    X = T.match_buffer(x, (1, m), "float32")
    W = T.match_buffer(w, (n, m), "float32")
    B = T.match_buffer(b, (n,), "float32")
    Z = T.match_buffer(z, (1, n), "float32")
    Y = T.alloc_buffer((1, n), "float32")
    for i, j, k in T.grid(1, n, m):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(X[vi, 0:m], W[vj, 0:m])
            T.writes(Y[vi, vj])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(1, n):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + B[vj]
)";

inline const char* const kRelu0 = R"(@T.prim_func
def relu0(x: T.handle, y: T.handle):
    n = T.int64()
    X = T.match_buffer(x, (n, 128), "float32")
    Y = T.match_buffer(y, (n, 128), "float32")
    for i, j in T.grid(n, 128):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = T.max(X[vi, vj], T.float32(0))
)";

// Programs in printed (canonical) form: print(parse(text)) == text.
inline std::vector<std::string> canonical_programs() {
  return {
      // Scheduled form: axes of every kind, T.where, block annotations,
      // local allocations, a nested block, loop kinds with annotations.
      R"(@T.prim_func
def scheduled(a: T.handle, c: T.handle, n: T.int32):
    T.func_attr({"global_symbol": "scheduled", "tir.noalias": 1, "ratio": 0.5, "tags": ["x", "y"], "shape": [2, 3], "none": None})
    m = T.int64()
    A = T.match_buffer(a, (m, 16), "float32", strides=(16, 1), elem_offset=4, align=32)
    C = T.match_buffer(c, (m,), "float32")
    Acc = T.alloc_buffer((m,), "float32", scope="local")
    for io in T.parallel((m + 3) // 4, annotations={"pragma": "fast", "unroll": 4}):
        for ii in T.vectorized(4):
            for k in range(2, 18):
                with T.block("acc"):
                    vi = T.axis.spatial(m, io * 4 + ii)
                    vk = T.axis.reduce((2, 18), k)
                    vo = T.axis.opaque(7, 3)
                    T.where(io * 4 + ii < m)
                    T.reads(A[vi, vk - 2], Acc[vi])
                    T.writes(Acc[vi])
                    T.block_attr({"meta": 1, "name": "acc"})
                    with T.init():
                        Acc[vi] = T.float32(0)
                    Acc[vi] = Acc[vi] + A[vi, vk - 2] * T.Cast("float32", vo)
    for i in T.unroll(m):
        with T.block("out"):
            vj = T.axis.spatial(m, i)
            tmp = T.alloc_buffer((1,), "float32", scope="local")
            T.reads(Acc[vj])
            T.writes(C[vj])
            with T.block("inner"):
                T.reads(Acc[vj])
                T.writes(tmp[0])
                tmp[0] = Acc[vj] * T.float32(2)
            C[vj] = T.Select(tmp[0] > T.float32(0), tmp[0], T.float32(-1.5))
    for r in range(1, 1 + m):
        with T.block("ranged"):
            vr = T.axis.spatial((1, 1 + m), r)
            T.reads()
            T.writes(C[vr - 1:vr - 1 + 2])
            C[vr - 1] = T.Cast("float32", n)
)",
      // Every expression kind, typed immediates, precedence and parentheses.
      R"(@T.prim_func
def expressions(a: T.handle, out: T.handle, s: T.int32, f: T.float64):
    T.func_attr({"global_symbol": "expressions"})
    A = T.match_buffer(a, (64,), "float32")
    Out = T.match_buffer(out, (64,), "float64")
    for i in range(64):
        Out[i] = T.Cast("float64", A[i]) * f + f / (f - T.float64(1)) - T.float64("inf")
        Out[i] = T.Cast("float64", T.exp(A[i]) + T.log(A[i]) + T.sqrt(T.fabs(A[i])) + T.pow(A[i], T.float32(2)))
        Out[i] = T.Select(T.isnan(A[i]) or not T.isfinite(A[i]), T.float64(0), T.float64(1e-05))
        Out[i] = T.Cast("float64", T.truncdiv(s, T.int32(3)) + T.truncmod(s, T.int32(-4)) + s // T.int32(2) % T.int32(5))
        Out[i] = T.Cast("float64", T.min(i, 3) - T.max(i - (i - 1), i * (i + 1)) - -5)
        Out[i] = T.Cast("float64", T.Let(t, i * 2, t + t))
        Out[i] = T.Select((i == 1) == (i != 2) and (i < 3 or i <= 4) and not i > 5 and i >= 0, f, T.float64("-inf"))
        Out[i] = T.reinterpret("float64", T.Cast("int64", A[i])) + T.call_extern("float64", "my_fn", A[i], "text \"quoted\"\n", s)
        Out[i] = T.if_then_else(T.likely(i < 32), f, T.float64(2)) + T.call_intrin("float64", "exp", A[i])
        Out[i] = T.Cast("float64", T.Cast("int8", A[i]) + T.int8(-128)) + T.Cast("float64", T.uint64(18446744073709551615)) + T.Cast("float64", T.bfloat16(1.5)) + T.Cast("float64", T.float16(-0))
        Out[i] = T.float64("nan") + T.float64(1.7976931348623157e+308) + T.Cast("float64", -9223372036854775808)
)",
      // Vectors: ramps, broadcasts, vector dtypes, vector loads and stores.
      R"(@T.prim_func
def vectors(a: T.handle, b: T.handle):
    T.func_attr({"global_symbol": "vectors"})
    A = T.match_buffer(a, (64,), "float32")
    B = T.match_buffer(b, (16,), "float32x4")
    for i in range(4):
        A[T.Ramp(i * 16, 1, 16)] = A[T.Ramp(i * 16, 1, 16)] * T.Broadcast(T.float32(2), 16)
        A[T.Ramp(i, 4, 4)] = T.Select(A[T.Ramp(i, 4, 4)] > T.Broadcast(T.float32(0), 4), B[i], T.Broadcast(T.float32(0), 4))
        v: T.float32x4 = B[i] + B[i + 4]
        B[i + 8] = v
)",
      // Lowered form: flattened views, lets, asserts, allocations, if/else,
      // evaluate, the packed-API builtins and extern calls.
      R"(@T.prim_func
def lowered(args: T.handle, arg_type_codes: T.handle, num_args: T.int32):
    T.func_attr({"global_symbol": "lowered", "calling_conv": "packed"})
    assert num_args == T.int32(1), "lowered: expected 1 argument"
    x: T.handle = T.call_intrin("handle", "anvil.arg_handle", args, 0)
    assert not T.call_intrin("bool", "anvil.is_null", x), "lowered: null"
    n: T.int64 = T.call_intrin("int64", "anvil.dltensor_shape", x, 0)
    with T.LetStmt(T.call_intrin("handle", "anvil.dltensor_data", x)) as x_data:
        with T.Assert(n > 0, "lowered: empty"):
            with T.decl_buffer((4,), "float32", scope="local") as tmp:
                for i in range(n):
                    if i % 2 == 0:
                        X = T.Buffer((n,), "float32", data=x_data)
                        tmp[0] = X[i]
                    else:
                        tmp[0] = T.float32(0)
                        T.evaluate(T.call_extern("int32", "trace", i, T.address_of(X[i])))
                    X[i] = tmp[0]
            X[0] = T.float32(1)
        T.evaluate(T.call_intrin("int32", "prefetch", T.address_of(X[0])))
    big = T.decl_buffer((n * 2,), "float32", align=128)
    for j in range(n * 2):
        big[j] = T.float32(1)
    if n > 4:
        T.evaluate(0)
)",
      // A private function with free buffer views owning their data and a
      // block with no realize.
      R"(@T.prim_func(private=True)
def main(x: T.handle):
    X = T.match_buffer(x, (2, 3), "int32")
    for i in range(6):
        X_flat = T.Buffer((6,), "int32", data=X.data)
        X_flat[i] = T.int32(0)
    with T.block("opaque", no_realize=True):
        vi = T.axis.opaque(2)
        T.reads()
        T.writes(X[vi, 0])
        X[vi, 0] = T.int32(1)
)",
      // Zero-dimensional buffers and an explicit root without allocations.
      R"(@T.prim_func
def scalar(x: T.handle, y: T.handle):
    T.func_attr({"global_symbol": "scalar"})
    X = T.match_buffer(x, (), "float32")
    Y = T.match_buffer(y, (), "float32")
    with T.block("root"):
        T.reads()
        T.writes()
        with T.block("copy"):
            T.reads(X[()])
            T.writes(Y[()])
            Y[()] = X[()]
)",
      // Blocks without a root: the implicit root is switched off.
      R"(@T.prim_func(implicit_root=False)
def no_root(x: T.handle):
    T.func_attr({"global_symbol": "no_root"})
    X = T.match_buffer(x, (4,), "float32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            T.reads()
            T.writes(X[vi])
            X[vi] = T.float32(1)
)",
  };
}

}  // namespace anvil::tir::testing
