#include "minisgd/config/deck.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>

#include "minisgd/config/deck_reader.hpp"
#include "minisgd/core/errors.hpp"
#include "minisgd/precision/format_spec.hpp"

namespace minisgd {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void read_run(DeckSection s, RunConfig& c) {
  c.name = s.text("name", c.name);
  c.seed = static_cast<std::uint64_t>(s.integer("seed", 42, 0));
  c.study = s.choice("study", c.study);
  const std::string lowered = s.text("study_format", precision::to_string(c.study_format));
  try {
    c.study_format = precision::parse_format(lowered);
  } catch (const std::invalid_argument& e) {
    s.fail("study_format", e.what());
  }
  c.restart = s.text("restart", "");
  if (c.study != Study::none && !c.restart.empty())
    s.fail("restart", "a precision study is several runs; restart one run at a time");
  c.min_seconds = s.number("min_seconds", 0.0, 0.0);
  if (c.min_seconds > 0 && c.study != Study::none)
    s.fail("min_seconds", "a precision study is several runs; repeat one run at a time");
  if (c.min_seconds > 0 && !c.restart.empty())
    s.fail("min_seconds", "repetitions start from step 0; not with run.restart");
  s.finish();
}

void read_data(DeckSection s, DataConfig& c) {
  c.source = s.choice("source", c.source);
  c.path = s.text("path", "");
  c.fallback = s.choice("fallback", c.fallback);
  c.features = s.integer("features", 0, 0);
  c.test_path = s.text("test_path", "");
  c.shuffle = s.flag("shuffle", c.shuffle);
  c.cache = s.flag("cache", c.cache);
  c.standardize = s.choice("standardize", c.standardize);
  c.layout = s.choice("layout", c.layout);
  c.hash_bits = int(s.integer("hash_bits", 0, 0));
  if (c.hash_bits > 30) s.fail("hash_bits", "at most 30 (column indices are 32-bit)");
  if (c.hash_bits > 0 && c.source != DataSource::libsvm)
    s.fail("hash_bits", "hashes the indices of a LIBSVM file (data.source: libsvm)");
  if (c.hash_bits > 0 && c.features > 0 && c.features != std::int64_t(1) << c.hash_bits)
    s.fail("features", "with data.hash_bits: " + std::to_string(c.hash_bits) + " there are 2^" +
                           std::to_string(c.hash_bits) + " features; leave features out");
  DeckSection syn = s.section("synthetic");
  c.synthetic.kind = syn.choice("kind", c.synthetic.kind);
  c.synthetic.rows = syn.integer("rows", 0, 0);
  c.synthetic.features = syn.integer("features", 0, 0);
  c.synthetic.noise = syn.number("noise", c.synthetic.noise, 0.0);
  c.synthetic.nnz_per_row = syn.number("nnz_per_row", 0.0, 0.0);
  c.synthetic.nnz_spread = syn.number("nnz_spread", c.synthetic.nnz_spread, 0.0);
  if (c.synthetic.nnz_spread > 1) syn.fail("nnz_spread", "must be at most 1");
  c.synthetic.zipf = syn.number("zipf", c.synthetic.zipf, 0.0);
  if (c.synthetic.features > (std::int64_t(1) << 31) - 2)
    syn.fail("features", "at most 2^31 - 2 (column indices are 32-bit)");
  syn.finish();
  if (c.source == DataSource::synthetic) {
    const bool sparse_rows = sparse_kind(c.synthetic.kind);
    if (c.layout == Layout::dense && sparse_rows)
      s.fail("layout", std::string("dense storage of ") + to_string(c.synthetic.kind) +
                           " data; its rows are generated sparse (use auto or sparse)");
    if (c.layout == Layout::sparse && !sparse_rows)
      s.fail("layout", std::string("data.synthetic.kind ") + to_string(c.synthetic.kind) +
                           " generates dense rows; the sparse kinds are sparse, rcv1-like, "
                           "news20-like, url-like, kdd2010-like and criteo-like");
  }
  if (c.layout == Layout::sparse && c.standardize != Standardize::none)
    s.fail("standardize", "sparse storage keeps the data as given (data.layout: sparse)");
  if (c.source != DataSource::synthetic && c.path.empty())
    s.fail("path", std::string("required when data.source is ") + to_string(c.source));
  s.finish();
}

void read_model(DeckSection s, ModelConfig& c) {
  c.loss = s.choice("loss", Loss::logistic);
  c.l2 = s.number("l2", 0.0, 0.0);
  // true: a constant feature regularized like the others; unregularized: left out of λ/2‖w‖²
  // (scikit-learn's and LIBLINEAR's users expect that intercept).
  if (s.has("intercept") && !s.is_map("intercept") && s.text("intercept", "") == "unregularized") {
    c.intercept = true;
    c.intercept_regularized = false;
  } else {
    try {
      c.intercept = s.flag("intercept", false);
    } catch (const InputError&) {
      s.fail("intercept",
             "expected true, false or unregularized, got '" + s.text("intercept", "") + "'");
    }
  }
  s.finish();
}

/// `auto` as the plain value of `key` (step_size: auto, eta0: auto).
bool is_auto(DeckSection& s, const std::string& key) {
  return s.has(key) && !s.is_map(key) && s.text(key, "") == "auto";
}

void read_step_size(DeckSection& solver, StepSizeConfig& c, double l2) {
  c.l2 = l2;
  // A plain number (constant step), auto (eta0: auto with its schedule), or a map.
  if (solver.has("step_size") && !solver.is_map("step_size")) {
    if (is_auto(solver, "step_size")) {
      c.eta0_auto = true;
      c.schedule = Schedule::linear;
      return;
    }
    c.eta0 = solver.number("step_size", c.eta0, 0.0);
    if (c.eta0 <= 0) solver.fail("step_size", "must be > 0");
    return;
  }
  DeckSection s = solver.section("step_size");
  c.eta0_auto = is_auto(s, "eta0");
  // With eta0: auto the schedule the probe and the defaults were measured with
  // (docs/convergence.md): linear decay to 0 at the run's last step.
  c.schedule = s.choice("schedule", c.eta0_auto ? Schedule::linear : Schedule::constant);
  const bool optimal = c.schedule == Schedule::optimal;
  if (optimal && l2 <= 0) s.fail("schedule", "optimal is 1/(λ(t + t0)): it needs model.l2 > 0");
  // optimal: scikit-learn's first step λ^(−1/4) (Bottou's heuristic) unless eta0 is given.
  if (!c.eta0_auto) c.eta0 = s.number("eta0", optimal ? std::pow(l2, -0.25) : c.eta0, 0.0);
  if (c.eta0 <= 0) s.fail("eta0", "must be > 0 (or auto)");
  c.decay = s.number("decay", c.schedule == Schedule::step ? 0.5 : 0.0, 0.0);
  if (optimal && s.has("decay")) s.fail("decay", "optimal takes no decay (t0 = 1/(λ·eta0))");
  if (c.schedule == Schedule::linear && s.has("decay"))
    s.fail("decay", "linear takes no decay (it falls to 0 at the run's last step)");
  s.finish();
}

/// solver.averaging and where it starts.
void read_averaging(DeckSection& solver, SolverConfig& c) {
  // eta0: auto comes with the averaging it was measured with (docs/convergence.md).
  c.averaging =
      solver.choice("averaging", c.step_size.eta0_auto ? Averaging::tail : Averaging::none);
  c.averaging_start = solver.optional_number("averaging_start", 0.0, kInf);
  if (c.averaging == Averaging::none && c.averaging_start)
    solver.fail("averaging_start", "applies to averaging: polyak or tail");
  c.averaging_gamma = solver.number("averaging_gamma", 0.0, 0.0);
  if (c.averaging == Averaging::none && solver.has("averaging_gamma"))
    solver.fail("averaging_gamma", "applies to averaging: polyak or tail");
  if (c.averaging == Averaging::tail && !c.averaging_start && c.epochs == 0 &&
      solver.has("averaging"))
    solver.fail("averaging",
                "tail averages the last half of solver.epochs: give epochs > 0 or "
                "solver.averaging_start");
}

/// solver.optimizer and its parameters (docs/compression.md, "Optimizers").
void read_optimizer(DeckSection& solver, SolverConfig& c) {
  c.optimizer = solver.choice("optimizer", OptimizerKind::sgd);
  if (c.method == Method::ca_sgd && c.optimizer != OptimizerKind::sgd)
    solver.fail("optimizer", "ca-sgd's recurrence is plain SGD; use optimizer: sgd");
  c.momentum = solver.number("momentum", c.momentum, 0.0, 1.0);
  if (c.momentum >= 1) solver.fail("momentum", "must be in [0, 1)");
  DeckSection adam = solver.section("adam");
  c.adam.beta1 = adam.number("beta1", c.adam.beta1, 0.0, 1.0);
  if (c.adam.beta1 >= 1) adam.fail("beta1", "must be in [0, 1)");
  c.adam.beta2 = adam.number("beta2", c.adam.beta2, 0.0, 1.0);
  if (c.adam.beta2 >= 1) adam.fail("beta2", "must be in [0, 1)");
  c.adam.epsilon = adam.number("epsilon", c.adam.epsilon, 0.0);
  if (c.adam.epsilon <= 0) adam.fail("epsilon", "must be > 0");
  adam.finish();
}

void read_solver(DeckSection s, SolverConfig& c, double l2) {
  c.method = s.choice("method", Method::sgd);
  const bool ca = c.method == Method::ca_sgd;
  c.decomposition = s.choice("decomposition", ca ? Decomposition::column : Decomposition::row);
  if (ca && c.decomposition == Decomposition::row)
    s.fail("decomposition", "ca-sgd works in the column decomposition");
  c.batch_size = s.integer("batch_size", c.batch_size, 1);
  c.s_auto = s.has("s") && !s.is_map("s") && s.text("s", "") == "auto";
  c.s = c.s_auto ? 1 : static_cast<int>(s.integer("s", 1, 1, 4096));
  if (!ca && (c.s != 1 || c.s_auto))
    s.fail("s", "inner steps per outer step are a ca-sgd setting (method is sgd)");
  c.machine = s.text("machine", "");
  if (c.s_auto && c.machine.empty())
    s.fail("s",
           "auto needs solver.machine, a machine file for the performance model "
           "(perf/machines/, written for this machine by perf/calibrate)");
  if (!c.s_auto && !c.machine.empty()) s.fail("machine", "is read only with solver.s: auto");
  read_step_size(s, c.step_size, l2);
  c.epochs = s.number("epochs", c.epochs, 0.0);
  c.max_iters = s.integer("max_iters", 0, 0);
  c.target_loss = s.optional_number("target_loss", -kInf, kInf);
  c.time_limit = s.number("time_limit", 0.0, 0.0);
  c.eval_every = s.integer("eval_every", 0, 0);
  c.reshuffle = s.flag("reshuffle", c.step_size.eta0_auto);  // eta0: auto's defaults
  read_optimizer(s, c);
  if (c.epochs == 0 && c.max_iters == 0) s.fail("epochs", "epochs and max_iters are both 0");
  read_averaging(s, c);
  s.finish();
}

/// SGD's share of the nine knobs (docs/precision.md): X stored as `data` (fp64, fp32, bf16 or
/// fp16), and one arithmetic type A = `weights` (fp32 or fp64) for margins, gradient and w.
/// The CA-SGD-only knobs take A's format, which is what SGD does in their places.
void sgd_plan(const DeckSection& s, precision::Preset& preset, precision::Plan& plan) {
  using namespace precision;
  const Format a = plan[Knob::weights].format;
  if (a != Format::fp64 && a != Format::fp32)
    s.fail("weights", "sgd keeps w (and computes) in fp32 or fp64");
  for (Knob k :
       {Knob::gram_input, Knob::gram_accum, Knob::gram_wire, Knob::margin_wire, Knob::recurrence})
    if (s.has(name(k)))
      s.fail(name(k), "a ca-sgd knob (sgd takes data, margin_accum, gradient_accum, weights)");
  for (Knob k : {Knob::margin_accum, Knob::gradient_accum}) {
    if (!s.has(name(k))) plan[k] = plan[Knob::weights];
    if (plan[k].format != a) s.fail(name(k), "sgd accumulates in the format of its weights");
  }
  const Format f = plan[Knob::data].format;
  if (f != Format::fp64 && f != Format::fp32 && f != Format::bf16 && f != Format::fp16)
    s.fail("data", "sgd stores X as fp64, fp32, bf16 or fp16");
  if (f == Format::fp64 && a != Format::fp64) s.fail("data", "fp64 data need fp64 weights");
  for (Knob k :
       {Knob::gram_input, Knob::gram_accum, Knob::gram_wire, Knob::margin_wire, Knob::recurrence})
    plan[k] = plan[Knob::weights];
  if (plan.uniform(Format::fp64)) preset = Preset::fp64;  // what the run actually uses
  if (plan.uniform(Format::fp32)) preset = Preset::fp32;
}

/// A preset, then any of the nine knobs on top of it (docs/precision.md).
void read_precision(DeckSection s, PrecisionConfig& c, Method method) {
  using namespace precision;
  c.preset = s.choice("preset", c.preset);
  Plan plan = preset_plan(c.preset);
  plan.rounding = s.choice("rounding", Rounding::nearest);
  for (Knob k : all_knobs) {
    const std::string value = s.text(name(k), to_string(plan[k]));
    try {
      plan[k] = parse_format(value);
    } catch (const std::invalid_argument& e) {
      s.fail(name(k), e.what());
    }
  }
  if (method == Method::sgd) sgd_plan(s, c.preset, plan);
  c.use(plan);
  // The CUDA-only Gram paths (docs/gpu.md); whether this build has them is the driver's
  // question (app/capabilities.hpp).
  c.gram_engine = s.choice("gram_engine", c.gram_engine);
  c.tf32 = s.flag("tf32", c.tf32);
  if (c.tf32 && c.gram_engine == GramEngine::portable)
    s.fail("tf32", "TF32 is a cuBLAS mode: not with gram_engine: portable");
  s.finish();
}

/// compression.method and one map of parameters per method; every map is checked, so a deck
/// can carry several and switch with --set compression.method=...
void read_compression(DeckSection s, CompressionConfig& c, const SolverConfig& solver,
                      const DataConfig& data) {
  c.method = s.choice("method", c.method);
  if (c.method != CompressionMethod::none && solver.decomposition == Decomposition::column)
    s.fail("method",
           "compresses the gradient AllReduce of the row decomposition, but "
           "solver.decomposition is column");
  if (c.method == CompressionMethod::sparse && data.layout == Layout::dense)
    s.fail("method",
           "sparse sends the nonzero gradient entries of sparse rows, but data.layout is "
           "dense; use data.layout: sparse (or auto) or compression.method: none");
  for_each_method(c, [&](CompressionMethod, const char* name, auto& params) {
    if constexpr (!std::is_same_v<std::decay_t<decltype(params)>, NoParams>) {
      DeckSection m = s.section(name);
      params.read(m);
      m.finish();
    }
  });
  s.finish();
}

void read_comm(DeckSection s, CommConfig& c, const CompressionConfig& compression) {
  c.backend = s.choice("backend", c.backend);
  if (c.backend == CommBackend::nccl && compression.method == CompressionMethod::aps)
    s.fail("backend",
           "nccl cannot carry compression.method: aps (its int16 block exponents "
           "need a 16-bit integer reduction, which NCCL lacks); use comm.backend: mpi");
  c.gpu_aware = s.flag("gpu_aware", false);
  if (c.gpu_aware && c.backend != CommBackend::mpi)
    s.fail("gpu_aware", "applies to comm.backend: mpi (NCCL always takes device buffers)");
  if (s.has("emulate")) {
    DeckSection e = s.section("emulate");
    c.latency_us = e.number("latency_us", 0.0, 0.0);
    c.bandwidth_GBps = e.number("bandwidth_GBps", 0.0, 0.0);
    if (c.bandwidth_GBps <= 0)
      e.fail("bandwidth_GBps", "required and > 0 when comm.emulate is given");
    e.finish();
  }
  s.finish();
}

void read_output(DeckSection s, OutputConfig& c) {
  c.report = s.text("report", "");
  c.history = s.text("history", "");
  c.weights = s.text("weights", "");
  c.phase_timers = s.flag("phase_timers", c.phase_timers);
  c.warmup_steps = s.integer("warmup_steps", c.warmup_steps, 0);
  DeckSection ckpt = s.section("checkpoint");
  c.checkpoint.path = ckpt.text("path", "");
  c.checkpoint.every = ckpt.integer("every", 0, 0);
  if (c.checkpoint.path.empty() && ckpt.has("every")) ckpt.fail("every", "needs a path");
  ckpt.finish();
  s.finish();
}

void read_validation(DeckSection s, ValidationConfig& c) {
  c.reference_loss = s.optional_number("reference_loss", -kInf, kInf);
  c.tolerance = s.number("tolerance", c.tolerance, 0.0);
  s.finish();
}

/// yaml-cpp keeps both entries of a key given twice and reads the first: a deck that says
/// `epochs` twice (or `solver:` twice) would run silently with half of what it says. Keys
/// that are maps or lists (`? [a]: 1`) are refused here too.
/// The walk also counts the nodes it visits: yaml-cpp shares an aliased node, so a deck of
/// nested aliases (a "billion laughs") is small to load but exponential to walk or read.
constexpr std::int64_t kMaxDeckNodes = 100000;

void reject_duplicate_keys(const YAML::Node& node, const std::string& path,
                           const std::string& origin, std::int64_t& nodes) {
  if (++nodes > kMaxDeckNodes)
    throw InputError(origin + ":" + std::to_string(node.Mark().line + 1) +
                     ": the deck expands to more than " + std::to_string(kMaxDeckNodes) +
                     " YAML nodes (nested aliases?)");
  if (node.IsSequence())
    for (const auto& item : node) reject_duplicate_keys(item, path, origin, nodes);
  if (!node.IsMap()) return;
  std::map<std::string, int> line_of;
  for (const auto& kv : node) {
    const int line = kv.first.Mark().line + 1;
    if (!kv.first.IsScalar())
      throw InputError(origin + ":" + std::to_string(line) + ": " + (path.empty() ? "deck" : path) +
                       ": a key must be a plain name, not a map or list");
    const std::string key = kv.first.Scalar();
    const std::string full = path.empty() ? key : path + "." + key;
    const auto [it, fresh] = line_of.emplace(key, line);
    if (!fresh)
      throw InputError(origin + ":" + std::to_string(line) + ": duplicate key '" + full +
                       "' (first given on line " + std::to_string(it->second) + ")");
    reject_duplicate_keys(kv.second, full, origin, nodes);
  }
}

/// Applies `a.b.c=value` to the tree; the value is parsed as YAML so types stay checkable.
void apply_override(YAML::Node root, const std::string& assignment, std::set<std::string>& keys) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set " + assignment + ": expected section.key=value");
  const std::string key = assignment.substr(0, eq);
  YAML::Node value;
  const std::string text = assignment.substr(eq + 1);
  // An empty value is the empty string (a text key such as output.report= turns an output
  // off), never YAML's null: a number or a flag then refuses it instead of taking its default.
  if (text.find_first_not_of(" \t") == std::string::npos)
    value = YAML::Node(std::string());
  else
    try {
      value = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw InputError("--set " + key + ": cannot parse value: " + e.msg);
    }
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  if (parts.size() < 2) throw InputError("--set " + key + ": expected section.key=value");
  // yaml-cpp nodes are handles: walking with operator[] on a copy mutates the tree.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = chain.back()[parts[i]];
    if (next && !next.IsNull() && !next.IsMap())
      throw InputError("--set " + key + ": '" + parts[i] + "' is not a section");
    if (!next || next.IsNull()) {
      chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = chain.back()[parts[i]];
    }
    chain.push_back(next);
  }
  chain.back()[parts.back()] = value;
  keys.insert(key);
}

/// Whether YAML text holds anything but blanks, comments and document markers.
bool holds_a_document(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t at = line.find_first_not_of(" \t\r");
    if (at == std::string::npos || line[at] == '#') continue;
    if (line.compare(at, 3, "---") == 0 || line.compare(at, 3, "...") == 0) {
      const std::size_t rest = line.find_first_not_of(" \t\r", at + 3);
      if (rest == std::string::npos || line[rest] == '#') continue;
    }
    return true;
  }
  return false;
}

}  // namespace

Config parse_deck(const std::string& yaml_text, const std::string& origin,
                  const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(yaml_text);
    if (docs.size() > 1)
      throw InputError(origin + ":" + std::to_string(docs[1].Mark().line + 1) +
                       ": a deck is one YAML document, this file holds " +
                       std::to_string(docs.size()));
    if (!docs.empty()) root = docs.front();
  } catch (const YAML::ParserException& e) {
    throw InputError(origin + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax: " + e.msg);
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) throw InputError(origin + ": a deck is a map of sections");
  std::int64_t nodes = 0;
  reject_duplicate_keys(root, "", origin, nodes);
  std::set<std::string> overridden;
  for (const auto& o : overrides) apply_override(root, o, overridden);

  Config c;
  c.deck_path = origin;
  DeckSection top(root, "", origin, &*c.resolved, &overridden, &c.where);
  read_run(top.section("run"), c.run);
  read_data(top.section("data"), c.data);
  read_model(top.section("model"), c.model);
  read_solver(top.section("solver"), c.solver, c.model.l2);
  read_precision(top.section("precision"), c.precision, c.solver.method);
  read_compression(top.section("compression"), c.compression, c.solver, c.data);
  read_comm(top.section("comm"), c.comm, c.compression);
  read_output(top.section("output"), c.output);
  read_validation(top.section("validation"), c.validation);
  top.finish();
  if (c.run.study == Study::precision && c.solver.method != Method::ca_sgd)
    throw InputError(origin +
                     ": run.study: precision lowers CA-SGD's knobs; it needs "
                     "solver.method: ca-sgd");
  if (c.solver.method == Method::ca_sgd && c.model.free_intercept())
    fail_key(c, "model.intercept",
             "unregularized: ca-sgd's recurrence shrinks every weight by the same 1 - eta*l2; "
             "use intercept: true, or solver.method: sgd");
  if (c.run.min_seconds > 0 && c.solver.time_limit > 0)
    fail_key(c, "run.min_seconds", "repeats whole trainings; not with solver.time_limit");
  if (c.run.min_seconds > 0 && !c.output.checkpoint.path.empty())
    fail_key(c, "run.min_seconds", "repeats whole trainings; not with output.checkpoint");
  if (c.run.study != Study::none && !c.output.checkpoint.path.empty())
    fail_key(c, "output.checkpoint.path",
             "a precision study is several runs; checkpoint one run at a time");
  return c;
}

void fail_key(const Config& c, const std::string& key, const std::string& what) {
  const auto at = c.where.find(key);
  throw InputError((at != c.where.end() ? at->second : c.deck_path + ": " + key) + ": " + what);
}

Config load_deck(const std::string& path, const std::vector<std::string>& overrides) {
  // Opened without blocking and checked as opened: a FIFO would block, a directory would read
  // as an empty deck (the defaults), a device as endless or no bytes.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    throw InputError(path + ": cannot open deck (" + std::strerror(error) + ")");
  }
  std::string text;
  std::string why;
  if (!S_ISREG(st.st_mode))
    why = "the deck is not a regular file";
  else if (std::uint64_t(st.st_size) > kMaxDeckBytes)  // a data file given as the deck, say
    why = "the deck is " + std::to_string(st.st_size) + " bytes, more than the " +
          std::to_string(kMaxDeckBytes >> 20) + " MiB a deck may hold";
  else {
    text.resize(std::size_t(st.st_size));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t r = ::read(fd, text.data() + done, text.size() - done);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      done += std::size_t(r);
    }
    text.resize(done);
  }
  ::close(fd);
  if (!why.empty()) throw InputError(path + ": " + why);
  // A deck emptied by accident (truncated, a failed copy) would run the default problem.
  if (!holds_a_document(text))
    throw InputError(path + ": the deck is empty (no YAML document); {} takes every default");
  return parse_deck(text, path, overrides);
}

}  // namespace minisgd
