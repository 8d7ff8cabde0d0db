#include "uops/ir/verifier.h"

#include <algorithm>
#include <map>

#include "uops/error.h"
#include "uops/ir/printer.h"

namespace uops::ir {

namespace {

class Verifier {
 public:
  explicit Verifier(const Program& p) : p_(p) {}

  std::vector<std::string> run() {
    for (size_t t = 0; t < p_.tensors.size(); ++t) check_shape(int(t));
    for (auto& eq : p_.equalities) {
      check_static(eq.a, "an assertion");
      check_static(eq.b, "an assertion");
    }
    std::map<int, int> owner_block;
    for (size_t b = 0; b < p_.blocks.size(); ++b)
      for (auto& l : p_.blocks[b].loops)
        for (auto& c : l.carried) {
          if (c.id < 0 || c.id >= p_.num_carried)
            fail("block " + std::to_string(b) + ": carried c" + std::to_string(c.id) +
                 " out of range");
          if (!owner_block.emplace(c.id, int(b)).second)
            fail("carried c" + std::to_string(c.id) + " is owned by two loops");
        }
    for (size_t b = 0; b < p_.blocks.size(); ++b) check_block(int(b));
    for (int t : p_.outputs())
      if (std::find(written_.begin(), written_.end(), t) == written_.end())
        fail("output '" + p_.tensors[t].name + "' is never written");
    return std::move(errors_);
  }

 private:
  void fail(const std::string& what) { errors_.push_back(what); }

  void check_static(const Index& e, const std::string& where) {
    rewrite(e, [&](const Index& leaf) -> Index {
      if (leaf->kind == IndexKind::Var || leaf->kind == IndexKind::Data)
        fail(where + " uses a loop variable or data");
      if (leaf->kind == IndexKind::Dim) {
        if (leaf->tensor < 0 || leaf->tensor >= int64_t(p_.tensors.size()) ||
            p_.tensors[leaf->tensor].role != Role::input ||
            leaf->axis >= int(p_.tensors[leaf->tensor].shape.size()))
          fail(where + " names an axis that is no input axis");
      }
      if (leaf->kind == IndexKind::Param &&
          std::find(p_.params.begin(), p_.params.end(), leaf->name) == p_.params.end())
        fail(where + " uses the undeclared parameter $" + leaf->name);
      return nullptr;
    });
  }

  void check_shape(int t) {
    const TensorInfo& info = p_.tensors[t];
    for (size_t a = 0; a < info.shape.size(); ++a) {
      if (info.role == Role::input) {
        if (info.shape[a]->kind != IndexKind::Dim || info.shape[a]->tensor != t ||
            info.shape[a]->axis != int(a))
          fail("input '" + info.name + "' axis " + std::to_string(a) + " is not its own size");
      } else {
        check_static(info.shape[a], "the shape of '" + info.name + "'");
      }
    }
  }

  // `vars`: loop variables in scope.
  void check_index(const Index& e, const std::vector<int>& vars, const std::string& where) {
    rewrite(e, [&](const Index& leaf) -> Index {
      switch (leaf->kind) {
        case IndexKind::Var:
          if (std::find(vars.begin(), vars.end(), leaf->var) == vars.end())
            fail(where + " uses v" + std::to_string(leaf->var) + " outside its loop");
          break;
        case IndexKind::Data:
          if (!valid_tensor(leaf->tensor) || p_.tensors[leaf->tensor].dtype != DType::i32 ||
              leaf->args.size() != p_.tensors[leaf->tensor].shape.size())
            fail(where + " reads an index from something that is no i32 tensor of that rank");
          else
            for (auto& a : leaf->args) check_index(a, vars, where);
          return leaf;
        default:
          check_static(leaf, where);
      }
      return nullptr;
    });
  }

  bool valid_tensor(int t) const { return t >= 0 && t < int(p_.tensors.size()); }

  void check_access(int t, const std::vector<Index>& index, const std::vector<int>& vars,
                    const std::string& where) {
    if (!valid_tensor(t)) {
      fail(where + " names tensor #" + std::to_string(t) + " which does not exist");
      return;
    }
    if (index.size() != p_.tensors[t].shape.size())
      fail(where + " indexes '" + p_.tensors[t].name + "' with " + std::to_string(index.size()) +
           " expressions, its rank is " + std::to_string(p_.tensors[t].shape.size()));
    for (auto& e : index) check_index(e, vars, where);
  }

  void check_value(const Value& v, const std::vector<int>& vars, const std::vector<int>& carried,
                   const std::string& where) {
    if (!v) {
      fail(where + " has no value");
      return;
    }
    switch (v->kind) {
      case ValueKind::Load:
        check_access(v->tensor, v->index, vars, where);
        break;
      case ValueKind::Carried:
        if (std::find(carried.begin(), carried.end(), v->carried) == carried.end())
          fail(where + " reads c" + std::to_string(v->carried) + " outside its loop");
        break;
      case ValueKind::IndexValue:
        check_index(v->ivalue, vars, where);
        break;
      case ValueKind::Unary:
        check_value(v->a, vars, carried, where);
        break;
      case ValueKind::Binary:
        check_value(v->a, vars, carried, where);
        check_value(v->b, vars, carried, where);
        break;
      case ValueKind::Ternary:
        check_value(v->a, vars, carried, where);
        check_value(v->b, vars, carried, where);
        check_value(v->c, vars, carried, where);
        break;
      case ValueKind::Const:
        break;
    }
  }

  void check_block(int b) {
    const Block& block = p_.blocks[b];
    std::string where = "block " + std::to_string(b);
    if (block.loops.empty()) fail(where + " has no loops");
    std::vector<int> vars, carried;
    std::map<int, ReduceOp> carried_op;
    for (auto& l : block.loops) {
      check_index(l.start, vars, where + " loop bound");
      check_index(l.end, vars, where + " loop bound");
      if (std::find(vars.begin(), vars.end(), l.var) != vars.end() || l.var < 0 ||
          l.var >= p_.num_vars)
        fail(where + ": loop variable v" + std::to_string(l.var) + " is reused or out of range");
      vars.push_back(l.var);
      for (auto& c : l.carried) {
        carried.push_back(c.id);
        carried_op[c.id] = c.op;
        if (c.op == ReduceOp::mean)
          fail(where + ": carried c" + std::to_string(c.id) + " uses mean");
      }
      for (auto& s : l.stmts) check_stmt(s, vars, carried, carried_op, where);
    }
  }

  void check_stmt(const Stmt& s, const std::vector<int>& vars, const std::vector<int>& carried,
                  std::map<int, ReduceOp>& carried_op, const std::string& where) {
    check_value(s.value, vars, carried, where);
    if (s.kind == StmtKind::reduce) {
      if (std::find(carried.begin(), carried.end(), s.carried) == carried.end()) {
        fail(where + " updates c" + std::to_string(s.carried) + " outside its loop");
        return;
      }
      if (carried_op[s.carried] != s.op)
        fail(where + " updates c" + std::to_string(s.carried) + " with another op");
      if (is_arg_reduce(s.op) != bool(s.arg))
        fail(where + ": an arg-reduction needs its position, and only it has one");
      if (s.arg) check_index(s.arg, vars, where);
      return;
    }
    check_access(s.tensor, s.index, vars, where);
    if (!valid_tensor(s.tensor)) return;
    if (p_.tensors[s.tensor].role == Role::input)
      fail(where + " writes the input '" + p_.tensors[s.tensor].name + "'");
    if (s.kind == StmtKind::accumulate && s.op != ReduceOp::sum && s.op != ReduceOp::max &&
        s.op != ReduceOp::min)
      fail(where + ": accumulate with " + op_name(s.op));
    written_.push_back(s.tensor);
  }

  const Program& p_;
  std::vector<std::string> errors_;
  std::vector<int> written_;
};

}  // namespace

std::vector<std::string> verify(const Program& p) {
  return Verifier(p).run();
}

void verify_or_throw(const Program& p, const std::string& stage) {
  auto errors = verify(p);
  if (errors.empty()) return;
  std::string msg = "invalid program after " + stage + ":\n";
  for (auto& e : errors) msg += "  " + e + "\n";
  throw InternalError(msg + print(p));
}

}  // namespace uops::ir
