"""Writes the ONNX backend node tests of the installed onnx package as files.

Newer onnx wheels no longer ship the node tests' data; they ship the cases that
produce it. This script turns each case into the directory layout the wheels used
to carry (model.onnx plus test_data_set_N/{input,output}_K.pb), so the conformance
runner reads the tests of whatever onnx is pinned. The directory is written once;
a stamp holding the onnx version makes later runs free.

usage: generate_node_tests.py OUTPUT_DIR
"""

import os
import shutil
import sys
import warnings


def serialized_value(value, value_info):
    from onnx import TensorProto, numpy_helper

    kind = value_info.type.WhichOneof("value")
    if kind == "sequence_type":
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if kind == "map_type":
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def write_case(case, root):
    directory = os.path.join(root, case.name)
    os.makedirs(directory)
    with open(os.path.join(directory, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    graph = case.model.graph
    for index, (inputs, outputs) in enumerate(case.data_sets):
        data_dir = os.path.join(directory, f"test_data_set_{index}")
        os.makedirs(data_dir)
        for prefix, values, infos in (("input", inputs, graph.input), ("output", outputs, graph.output)):
            for k, value in enumerate(values):
                with open(os.path.join(data_dir, f"{prefix}_{k}.pb"), "wb") as f:
                    f.write(serialized_value(value, infos[k]))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: generate_node_tests.py OUTPUT_DIR")
    import onnx
    from onnx.backend.test.case import node

    output = sys.argv[1]
    stamp = os.path.join(output, ".onnx-version")
    if os.path.exists(stamp) and open(stamp).read().strip() == onnx.__version__:
        return
    if os.path.exists(output):
        shutil.rmtree(output)
    staging = output + ".partial"
    if os.path.exists(staging):
        shutil.rmtree(staging)
    os.makedirs(staging)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node.collect_testcases(None)
        for case in cases:
            write_case(case, staging)
    with open(os.path.join(staging, ".onnx-version"), "w") as f:
        f.write(onnx.__version__ + "\n")
    os.rename(staging, output)
    print(f"wrote {len(cases)} node tests of onnx {onnx.__version__} to {output}")


if __name__ == "__main__":
    main()
