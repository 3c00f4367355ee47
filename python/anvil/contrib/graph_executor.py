"""TVM's tvm.contrib.graph_executor: GraphModule and create."""

from ..runtime.graph_executor import BenchmarkResult, GraphModule, ProfileReport, create

__all__ = ["GraphModule", "BenchmarkResult", "ProfileReport", "create"]
