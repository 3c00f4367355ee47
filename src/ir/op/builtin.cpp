// The operators that call other functions: call_tir runs a PrimFunc of the
// module, call_dps_packed a registered runtime function. Both write into a
// destination the caller allocates, so their type is the declared output.
#include "ir/op/families.h"

namespace anvil::ir {
namespace {

Type destination_passing_relation(const RelationArgs& args) {
  if (args.type_args.size() != 1)
    throw_error(args.op.name, " needs exactly one output type (out=...), got ",
                args.type_args.size());
  if (args.inputs.size() != 2 || !as<TupleTypeNode>(args.inputs[1]))
    throw_error(args.op.name, " takes a callee and a tuple of arguments");
  return args.type_args[0];
}

}  // namespace

void register_builtin_ops(OpTable& table) {
  table.add("call_tir")
      .describe("Call a tensor-IR function of the module in destination-passing style")
      .inputs({"func", "args"})
      .type_relation(destination_passing_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("call_dps_packed")
      .describe("Call a registered runtime function by name in destination-passing style")
      .inputs({"func", "args"})
      .type_relation(destination_passing_relation)
      .fusion_pattern(OpPattern::Opaque);
}

}  // namespace anvil::ir
