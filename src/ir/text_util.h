// Pieces of the graph IR text format shared by the printer and the parser:
// name quoting, string escapes, number spelling and the metadata encoding.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "anvil/ir/ir.h"
#include "anvil/ir/printer.h"

namespace anvil::ir::text {

// The format version written in the "#[version = ...]" header.
inline constexpr const char* kTextFormatVersion = "0.0.5";

// Start of the section holding constants too large to print inline.
inline constexpr std::string_view kMetadataMarker = "#[metadata]";

// Constants with at most this many elements print inline.
inline constexpr int64_t kMaxInlineElements = 16;

// True when name can follow '%' or '@' unquoted: [A-Za-z_][A-Za-z0-9_]*.
bool is_plain_name(std::string_view name);

// The name as written after '%' or '@': plain, or quoted with escapes.
std::string name_text(std::string_view name);

// The shortest decimal spelling that reads back to the same value ("1", "0.5", "1e-05", "inf").
std::string float_text(float value);
std::string double_text(double value);

// Suffix of a scalar literal of dtype ("f", "f64", "i64", "" for int32), or
// nullopt when the dtype has no literal form.
std::optional<std::string> scalar_suffix(DataType dtype);

// The dtype a literal suffix stands for; nullopt for an unknown suffix.
// No suffix means int32 for integers and float32 for decimals.
std::optional<DataType> dtype_of_suffix(std::string_view suffix, bool has_fraction);

// Base64 (RFC 4648) of bytes, in lines of 76 characters.
std::string base64_encode(std::string_view bytes);

// Decodes base64, ignoring whitespace; nullopt on any other bad character or length.
std::optional<std::string> base64_decode(std::string_view text);

// call_tir and call_dps_packed: their second argument prints as "(a, b)".
bool is_destination_passing_op(std::string_view name);

// Calls fn on each direct operand of node (binding vars and params included).
void for_each_child(const ExprNode* node, const std::function<void(const Expr&)>& fn);

// The inline text of a constant ("1f", "True", "const([1, 2], shape=(2), dtype=int64)"),
// or nullopt when it is too large and goes to the metadata section.
std::optional<std::string> constant_literal(const Tensor& data);

}  // namespace anvil::ir::text
