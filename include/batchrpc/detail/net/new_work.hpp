// SPDX-License-Identifier: MIT
// What a message from the client carries, as a WebSocket or stream connection at max_in_flight
// needs to know: new work is held back (see HeldRequests); what carries none goes to the
// session at once: the client's answers to the server's requests, which handlers in flight may
// be waiting for, cancellations of the requests that fill the cap, and what is answered without
// running anything (invalid members, bad JSON).
#pragma once

#include <cstddef>
#include <string_view>

#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "../../config.hpp"
#include "../../router.hpp"
#include "held_requests.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

struct MessageCarries {
  bool new_work = false;  // a member names a method other than a cancellation
  bool answers = false;   // a member has an "id" and no "method": a Response, maybe broken
  bool cancels = false;   // a member names a cancellation
};

// Reads only the members' envelopes (their "method", and whether they have one) as the
// message streams past: nothing is built, and params are skipped.
class NewWorkScan : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, NewWorkScan> {
 public:
  explicit NewWorkScan(const Router& router) : router_(router) {}

  [[nodiscard]] MessageCarries carries() const noexcept { return carries_; }

  bool Default() { return value(); }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return value(); }
  bool String(const char* text, rapidjson::SizeType length, bool) {
    if (in_member_level() && expect_method_) {
      has_method_ = true;
      const rpc::detail::Method* method = rpc::detail::RouterAccess::find(router_, std::string_view(text, length));
      cancels_ = method != nullptr && method->runs_first;
    }
    return value();
  }
  bool Key(const char* text, rapidjson::SizeType length, bool) {
    const std::string_view key(text, length);
    expect_method_ = in_member_level() && key == "method";
    if (expect_method_) names_method_ = true;
    if (in_member_level() && key == "id") has_id_ = true;
    return true;
  }
  bool StartObject() {
    if (at_member_slot()) {  // a member begins
      in_member_ = true;
      has_method_ = false;
      names_method_ = false;
      has_id_ = false;
      cancels_ = false;
    } else {
      value();
    }
    ++depth_;
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    --depth_;
    if (in_member_ && at_member_slot()) {
      in_member_ = false;
      if (has_id_ && !names_method_) carries_.answers = true;
      if (has_method_ && !cancels_) carries_.new_work = true;
      if (has_method_ && cancels_) carries_.cancels = true;
    }
    return true;
  }
  bool StartArray() {
    if (depth_ == 0) {
      batch_ = true;
    } else {
      value();
    }
    ++depth_;
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    --depth_;
    return true;
  }

 private:
  // Where a member stands: the root, or an element of the batch.
  bool at_member_slot() const { return depth_ == 0 || (batch_ && depth_ == 1); }
  // Inside a member object, at its own level (not in its params).
  bool in_member_level() const { return in_member_ && depth_ == (batch_ ? 2u : 1u); }

  // A value other than an object where a member stands is an invalid member, answered without
  // running anything; any value ends what a member's "method" key announced.
  bool value() {
    expect_method_ = false;
    return true;
  }

  const Router& router_;
  std::size_t depth_ = 0;
  bool batch_ = false;
  bool in_member_ = false;
  bool expect_method_ = false;
  bool has_method_ = false;   // a "method" that is a string
  bool names_method_ = false;  // a "method" key at all
  bool has_id_ = false;
  bool cancels_ = false;
  MessageCarries carries_;
};

// Nothing for a message that does not parse (it is answered -32700 and runs nothing) and when
// there is no memory to tell: then it goes to the session, which answers what memory allows.
inline MessageCarries what_it_carries(std::string_view message, const Router& router) noexcept {
  try {
    NewWorkScan scan(router);
    rapidjson::MemoryStream in(message.data(), message.size());
    rapidjson::Reader reader;
    if (reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag>(in, scan).IsError()) {
      return {};
    }
    return scan.carries();
  } catch (...) {
    return {};
  }
}

// What a WebSocket or stream connection does with a message it read. hand_in_and_replay: a
// cancellation read while requests are held may name one of them, which the session does not
// know yet; it goes in now (for what is in flight) and again, through HeldRequests, right after
// the requests held before it.
enum class Admission { hand_in, hand_in_and_replay, hold, close };

// Where a WebSocket or stream connection stands against max_in_flight.
struct CapState {
  std::size_t unwritten = 0;  // handed in, reply not written yet
  std::size_t cap = 1;        // max_in_flight
  bool holds = false;         // HeldRequests is not empty
  bool held_has_room = true;  // HeldRequests::has_room(waits_on_client)
  bool waits_on_client = false;

  bool at_cap() const noexcept { return unwritten >= cap || holds; }
  // Reading goes on while a handler waits on the client (its answer must get through).
  // Otherwise it pauses once a message without work is in flight past the cap (one at a
  // time: they are answered at once), and once HeldRequests is full.
  bool may_read() const noexcept { return waits_on_client || (unwritten <= cap && held_has_room); }

  static CapState of(std::size_t unwritten, std::size_t cap, const HeldRequests& held, bool waits_on_client) noexcept {
    return {.unwritten = unwritten,
            .cap = cap,
            .holds = !held.empty(),
            .held_has_room = held.has_room(waits_on_client),
            .waits_on_client = waits_on_client};
  }
};

// Below the cap everything goes in. At it, what carries no new work goes in, and so does a
// batch that mixes answers with new work while a handler waits on the client (the answer it
// waits for may be in there; up to twice the cap in flight, so that such batches cannot flood
// past it); other messages are held while HeldRequests has room, or while nothing waits on the
// client (the connection then stops reading: backpressure). A client that sends more work
// where the server waits for its answers is closed.
inline Admission admission(std::string_view message, const Router& router, const CapState& state) noexcept {
  if (!state.at_cap()) return Admission::hand_in;
  const MessageCarries carries = what_it_carries(message, router);
  if (!carries.new_work) {
    // Not a batch with answers in it: those would reach the handlers waiting for them twice.
    // Not past HeldRequests' room either: a client flooding cancellations gets them taken once.
    const bool replays = carries.cancels && !carries.answers && state.holds && state.held_has_room;
    return replays ? Admission::hand_in_and_replay : Admission::hand_in;
  }
  if (carries.answers && state.waits_on_client && state.unwritten < 2 * state.cap) return Admission::hand_in;
  if (state.held_has_room || !state.waits_on_client) return Admission::hold;
  return Admission::close;
}

}  // namespace rpc::net::detail
