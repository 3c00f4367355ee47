// Greedy generation with a GPT-style decoder exported to ONNX with a KV cache
// (gpt_decoder.py writes its two graphs): the prompt runs through gpt_prefill.onnx once, then
// each new token through gpt_decode.onnx against the cache the previous step returned. Both
// graphs have dynamic dims (the prompt length, the past length), so each is compiled once for
// the VM and serves every length.
//
//   generate MODEL_DIR [TOKENS] [PROMPT_LENGTH]
//
// Prints the generated tokens and the decode rate in tokens/s. As a check, the prompt and the
// generated tokens then go through the prefill graph in one piece: at each position its
// argmax must be the token the cached steps chose (the decode path against the no-cache path).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "anvil/driver/vm_build.h"
#include "anvil/frontend/onnx.h"
#include "anvil/runtime/vm.h"

namespace {

using anvil::Tensor;

// The argmax over the vocabulary of position `row` of logits (1, positions, vocabulary).
int64_t argmax_at(const Tensor& logits, int64_t row) {
  const int64_t vocabulary = logits.shape_vector().back();
  int64_t best = 0;
  for (int64_t v = 1; v < vocabulary; ++v)
    if (logits.get_as_double(row * vocabulary + v) > logits.get_as_double(row * vocabulary + best))
      best = v;
  return best;
}

Tensor token_ids(const std::vector<int64_t>& tokens) {
  Tensor ids = Tensor::empty({1, int64_t(tokens.size())}, anvil::DataType::int64());
  for (size_t i = 0; i < tokens.size(); ++i) ids.set_from_double(int64_t(i), double(tokens[i]));
  return ids;
}

anvil::VirtualMachine compile(const std::filesystem::path& path) {
  anvil::frontend::ImportedModel model = anvil::frontend::from_onnx(path);
  return anvil::driver::build_vm(model.mod, model.params).create_vm();
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: generate MODEL_DIR [TOKENS] [PROMPT_LENGTH]\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int tokens = argc > 2 ? std::atoi(argv[2]) : 32;
  const int prompt_length = argc > 3 ? std::atoi(argv[3]) : 16;
  if (tokens < 1 || prompt_length < 1) {
    std::fprintf(stderr, "generate: TOKENS and PROMPT_LENGTH must be positive\n");
    return 2;
  }
  anvil::VirtualMachine prefill = compile(dir / "gpt_prefill.onnx");
  anvil::VirtualMachine decode = compile(dir / "gpt_decode.onnx");
  const int cache_count = decode.get_num_inputs() - 1;  // past_key_i, past_value_i

  std::vector<int64_t> sequence;
  for (int i = 0; i < prompt_length; ++i) sequence.push_back((i * 37 + 11) % 997);

  // The prompt: logits of every position, and the cache of every layer.
  prefill.set_input("input_ids", token_ids(sequence));
  prefill.run();
  sequence.push_back(argmax_at(prefill.get_output(0), prompt_length - 1));
  std::vector<Tensor> cache;
  for (int i = 0; i < cache_count; ++i) cache.push_back(prefill.get_output(1 + i));

  // One token at a time against the cache the previous step grew.
  const auto start = std::chrono::steady_clock::now();
  for (int step = 1; step < tokens; ++step) {
    decode.set_input(0, token_ids({sequence.back()}));
    for (int i = 0; i < cache_count; ++i) decode.set_input(1 + i, cache[size_t(i)]);
    decode.run();
    sequence.push_back(argmax_at(decode.get_output(0), 0));
    for (int i = 0; i < cache_count; ++i) cache[size_t(i)] = decode.get_output(1 + i);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("tokens:");
  for (size_t i = size_t(prompt_length); i < sequence.size(); ++i)
    std::printf(" %lld", (long long)sequence[i]);
  std::printf("\n");
  if (tokens > 1)
    std::printf("anvil: %d decode steps at past %d to %d: %.1f tokens/s\n", tokens - 1,
                prompt_length, prompt_length + tokens - 2, (tokens - 1) / seconds);

  // The check: the whole sequence through the prefill graph.
  std::vector<int64_t> all(sequence.begin(), sequence.end() - 1);
  prefill.set_input("input_ids", token_ids(all));
  prefill.run();
  Tensor logits = prefill.get_output(0);
  int mismatches = 0;
  for (size_t i = size_t(prompt_length); i < sequence.size(); ++i)
    mismatches += argmax_at(logits, int64_t(i) - 1) != sequence[i];
  std::printf("check against one prefill of the whole sequence: %d of %d tokens differ\n",
              mismatches, tokens);
  return mismatches == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "generate: %s\n", e.what());
  return 1;
}
