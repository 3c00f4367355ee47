// Lowering passes (src/tir/transform/, one pass per file) and the pipeline
// that turns a scheduled PrimFunc into the lowered form code generators take.
#pragma once

#include <functional>
#include <string>

#include "anvil/tir/tir.h"

namespace anvil::tir::transform {

// Buffers allocated in the root block move down to the innermost loop that
// encloses every access to them, shrunk to the region accessed below that
// loop (indices shifted). With compute_at this is what makes a cache_read
// copy a small contiguous packed panel instead of a full-size buffer. Runs on
// the scheduled form; a buffer accumulated across a reduction loop stays above
// that loop.
PrimFunc compact_buffer_allocation(const PrimFunc& func);
// Blocks become plain loops: iteration variables substituted by their
// values, predicates become ifs, init runs under "all reduce vars at their
// minimum", alloc_buffers become Allocate at the block's position.
PrimFunc convert_blocks_to_loops(const PrimFunc& func);
// Every buffer access becomes one-dimensional (strides and elem_offset folded
// into the index); flattened buffers share the original's data Var.
PrimFunc flatten_buffers(const PrimFunc& func);

// Cuts serial and unrolled loops whose bodies guard on the loop variable (the predicate of a
// non-dividing split) into a main part where the guards are proven true and removed, and a
// tail that keeps them.
PrimFunc partition_loops(const PrimFunc& func);
// Runs the arithmetic simplifier over every expression, with loop ranges
// known; removes loops of extent 1 and branches proven constant.
PrimFunc simplify(const PrimFunc& func);
// Vectorized loops of constant extent become vector expressions (Ramp,
// Broadcast, vector loads and stores); what cannot be vectorized stays a
// serial loop.
PrimFunc vectorize_loops(const PrimFunc& func);
// Unrolled loops of constant extent are expanded into copies of their body.
PrimFunc unroll_loops(const PrimFunc& func);
// Local allocations whose lifetimes do not overlap share storage; allocations
// hoisted out of serial loops.
PrimFunc storage_rewrite(const PrimFunc& func);
// Casts to and from float8 / float4 become integer and float32 arithmetic on the
// codes (round to nearest even, saturating), so code generators treat those types
// as bytes.
PrimFunc legalize_minifloats(const PrimFunc& func);
// Intrinsics the code generators do not take directly become plain
// arithmetic (e.g. rsqrt -> 1 / sqrt, if_then_else -> branches where needed).
PrimFunc lower_intrinsics(const PrimFunc& func);
// The packed calling convention of docs/kernel-abi.md: parameters become
// (args, arg_type_codes, num_args, ret_value, ret_type_code); entry asserts
// check argument count, type codes, ranks, dtypes, shapes and compact
// strides with messages naming the function and argument; buffer data vars
// and symbolic shape vars are bound from the DLTensors. Sets attr
// "calling_conv" = "packed".
PrimFunc make_packed_api(const PrimFunc& func);

struct LowerOptions {
  // Apply make_packed_api last (off for functions called from other kernels).
  bool packed_api = true;
  // Called after each pass with its name and result ("simplify", ...).
  std::function<void(const std::string& pass, const PrimFunc& func)> dump;
};

// The pipeline, in its one place: compact_buffer_allocation, convert_blocks_to_loops,
// partition_loops, flatten_buffers, simplify, vectorize_loops, unroll_loops, simplify,
// storage_rewrite, lower_intrinsics, make_packed_api. Verifies the result in lowered form.
PrimFunc lower(const PrimFunc& func, const LowerOptions& options = {});

}  // namespace anvil::tir::transform
