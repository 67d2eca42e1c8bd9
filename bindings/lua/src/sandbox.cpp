// Sandbox: the public face of one script's Lua state.
#include "graft/lua/sandbox.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "lua_library.hpp"
#include "sandbox_state.hpp"

namespace graft::lua {

Result<std::unique_ptr<Sandbox>> Sandbox::create(SandboxOptions options) {
  auto state = std::make_unique<detail::SandboxState>(std::move(options));
  Status st = state->open(detail::install_library);
  if (!st) return st;
  return std::unique_ptr<Sandbox>(new Sandbox(std::move(state)));
}

Sandbox::Sandbox(std::unique_ptr<detail::SandboxState> state) : state_(std::move(state)) {}
Sandbox::~Sandbox() = default;

Status Sandbox::load_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(Diagnostic{.file = path.string(), .message = "cannot read the script"});
  std::ostringstream text;
  text << in.rdbuf();
  return state_->load_main(text.str(), path.string(), path, detail::load_chunk);
}

Status Sandbox::load_string(std::string_view code, std::string_view chunk_name) {
  return state_->load_main(code, std::string(chunk_name), {}, detail::load_chunk);
}

Result<std::string> Sandbox::evaluate(std::string_view code, std::string_view chunk_name) {
  std::string out;
  Status st = state_->protected_call(
      [&](lua_State* L) {
        const int base = lua_gettop(L);
        detail::load_chunk(L, code, chunk_name);
        lua_call(L, 0, LUA_MULTRET);
        const int n = lua_gettop(L) - base;
        for (int i = 1; i <= n; ++i) {
          lua_getfield(L, LUA_REGISTRYINDEX, "graft.tostring");
          lua_pushvalue(L, base + i);
          lua_call(L, 1, 1);
          std::size_t len = 0;
          const char* s = lua_tolstring(L, -1, &len);
          if (i > 1) out += '\t';
          out.append(s ? s : "", s ? len : 0);
          lua_pop(L, 1);
        }
      },
      false);
  if (!st) return st;
  return out;
}

const std::vector<std::filesystem::path>& Sandbox::files() const { return state_->files(); }
const std::string& Sandbox::script_name() const { return state_->script_name(); }
const SandboxOptions& Sandbox::options() const { return state_->options(); }

void Sandbox::request_stop(std::string message) { state_->request_stop(std::move(message)); }

MemoryUsage Sandbox::memory() const {
  auto& b = state_->budget();
  return {b.memory_used, b.memory_peak, b.memory_limit};
}

std::uint64_t Sandbox::allocations() const { return state_->budget().allocations; }

}  // namespace graft::lua
