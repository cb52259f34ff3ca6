//===- Parser.cpp - .seq recursive-descent parser -------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "frontend/Parser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::seq::frontend;
using llvm::SMLoc;

//===----------------------------------------------------------------------===//
// Tokens and diagnostics
//===----------------------------------------------------------------------===//

/// Tracks one level of nesting (an expression or a block) for as long as it
/// is being parsed.
class Parser::NestingGuard {
public:
  explicit NestingGuard(Parser &parser) : parser(parser) { ++parser.nesting; }
  ~NestingGuard() { --parser.nesting; }
  NestingGuard(const NestingGuard &) = delete;
  NestingGuard &operator=(const NestingGuard &) = delete;

  /// Reports and returns failure when the limit is exceeded.
  ParseResult check(SMLoc loc) {
    if (parser.nesting <= parser.limits.maxNesting)
      return success();
    return parser.emitError(loc, "expression or block nested too deeply (the "
                                 "limit is " +
                                     Twine(parser.limits.maxNesting) +
                                     " levels)");
  }

private:
  Parser &parser;
};

namespace {
/// Whether `name` can be exported as `seqc_invoke_<name>` and named on a
/// command line: ASCII letters, digits and '_', starting with a letter.
bool isEntrySymbol(StringRef name) {
  return !name.empty() && llvm::isAlpha(name.front()) &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// Line breaks are insignificant while a parenthesis or bracket is open, as
/// in Python, so that long argument lists can span lines.
class BracketScope {
public:
  explicit BracketScope(unsigned &depth) : depth(depth) { ++depth; }
  ~BracketScope() { --depth; }
  BracketScope(const BracketScope &) = delete;
  BracketScope &operator=(const BracketScope &) = delete;

private:
  unsigned &depth;
};
} // namespace

Parser::Parser(const llvm::SourceMgr &sourceMgr, unsigned bufferID,
               MLIRContext *context, ParserLimits limits)
    : locator(sourceMgr, context), limits(limits),
      lexer(sourceMgr, bufferID, [this](SMLoc loc, const Twine &message) {
        reportError(loc, message);
      }) {
  consume();
}

void Parser::consume() {
  if (!stopped) {
    do {
      tok = lexer.lexToken();
    } while (tok.is(Token::newline) && bracketDepth > 0);
  }
  // After too many errors (possibly reported by the lexer just now), every
  // parse loop ends at the end of the file.
  if (stopped)
    tok = Token(Token::eof, tok.getSpelling().take_front(0));
}

bool Parser::consumeIf(Token::Kind kind) {
  if (tok.isNot(kind))
    return false;
  consume();
  return true;
}

ParseResult Parser::expect(Token::Kind kind, const Twine &context) {
  if (consumeIf(kind))
    return success();
  return emitError("expected " + Token::describe(kind) + " " + context);
}

void Parser::skipSeparators(bool semicolons) {
  while (tok.is(Token::newline) || (semicolons && tok.is(Token::semicolon)))
    consume();
}

void Parser::reportError(SMLoc loc, const Twine &message) {
  if (stopped)
    return;
  mlir::emitError(locator.get(loc)) << message;
  if (++numErrors < limits.maxErrors)
    return;
  mlir::emitError(locator.get(loc))
      << "too many errors (" << numErrors << "), stopping";
  stopped = true;
  tok = Token(Token::eof, tok.getSpelling().take_front(0));
}

ParseResult Parser::emitError(SMLoc loc, const Twine &message) {
  if (tok.isNot(Token::error))
    reportError(loc, message);
  return failure();
}

ParseResult Parser::expectStatementEnd() {
  if (tok.isAny(Token::newline, Token::semicolon)) {
    consume();
    return success();
  }
  if (tok.isAny(Token::r_brace, Token::eof))
    return success();
  return emitError("expected a newline or ';' after the statement");
}

void Parser::skipStatement() {
  unsigned braces = 0;
  while (tok.isNot(Token::eof)) {
    if (tok.is(Token::l_brace)) {
      ++braces;
    } else if (tok.is(Token::r_brace)) {
      if (braces == 0)
        return;
      --braces;
    } else if (braces == 0 && tok.isAny(Token::newline, Token::semicolon)) {
      consume();
      return;
    }
    consume();
  }
}

void Parser::skipDeclaration() {
  unsigned braces = 0;
  while (tok.isNot(Token::eof)) {
    if (tok.is(Token::l_brace))
      ++braces;
    else if (tok.is(Token::r_brace) && braces > 0)
      --braces;
    else if (braces == 0 &&
             tok.isAny(Token::kw_model, Token::kw_module, Token::kw_def))
      return;
    consume();
  }
}

ast::ExprPtr Parser::finish(ast::ExprPtr expr, unsigned childHeight) {
  unsigned height = childHeight + 1;
  expr->setHeight(height);
  if (height <= limits.maxNesting)
    return expr;
  (void)emitError(expr->getLoc(), "expression or block nested too deeply (the "
                                  "limit is " +
                                      Twine(limits.maxNesting) + " levels)");
  return nullptr;
}

ast::ExprPtr Parser::finish(ast::ExprPtr expr,
                            std::initializer_list<const ast::Expr *> children) {
  unsigned height = 0;
  for (const ast::Expr *child : children)
    if (child)
      height = std::max(height, child->getHeight());
  return finish(std::move(expr), height);
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

std::unique_ptr<ast::SourceFile> Parser::parseFile() {
  auto file = std::make_unique<ast::SourceFile>();
  while (true) {
    skipSeparators();
    if (tok.is(Token::eof))
      break;
    if (failed(parseDecl(*file)))
      skipDeclaration();
  }
  if (numErrors)
    return nullptr;
  return file;
}

ParseResult Parser::parseDecl(ast::SourceFile &file) {
  if (tok.isAny(Token::kw_model, Token::kw_module)) {
    std::unique_ptr<ast::ModuleDecl> module = parseModuleDecl();
    if (!module)
      return failure();
    file.modules.push_back(std::move(module));
    return success();
  }
  if (tok.is(Token::kw_def)) {
    std::unique_ptr<ast::FuncDecl> func = parseFuncDecl();
    if (!func)
      return failure();
    file.functions.push_back(std::move(func));
    return success();
  }
  return emitError("expected 'model', 'module' or 'def' at the top level");
}

std::unique_ptr<ast::ModuleDecl> Parser::parseModuleDecl() {
  // After an error in the body, a missing forward may be its consequence.
  unsigned errorsBefore = numErrors;
  auto module = std::make_unique<ast::ModuleDecl>();
  module->isModel = tok.is(Token::kw_model);
  StringRef keyword = module->isModel ? "model" : "module";
  consume();
  module->loc = tok.getLoc();
  module->name = tok.getSpelling();
  if (failed(expect(Token::identifier, "(the name) after '" + keyword + "'")))
    return nullptr;
  {
    // The scope opens before '(' is consumed, so that a line break right
    // after it is already skipped.
    BracketScope brackets(bracketDepth);
    if (failed(expect(Token::l_paren, "after the " + keyword + " name")))
      return nullptr;
    if (tok.isNot(Token::r_paren) && failed(parseParamList(module->params)))
      return nullptr;
  }
  if (failed(expect(Token::r_paren, "after the parameters")))
    return nullptr;
  skipSeparators(/*semicolons=*/false);
  if (failed(expect(Token::l_brace, "to begin the " + keyword + " body")))
    return nullptr;

  while (true) {
    skipSeparators();
    if (tok.isAny(Token::r_brace, Token::eof))
      break;
    // A member may carry any name, keywords included (`model = ...`, as
    // Hugging Face names its decoders): a keyword followed by '=' is one.
    bool keywordMember =
        tok.isKeyword() && lexer.peekToken().is(Token::equal);
    if (tok.is(Token::kw_def) && !keywordMember) {
      SMLoc defLoc = tok.getLoc();
      std::unique_ptr<ast::FuncDecl> func = parseFuncDecl();
      if (!func) {
        skipStatement();
        continue;
      }
      // A module has one function, `forward`; a model one function per
      // entry, each name once.
      if (!module->isModel && func->name != "forward") {
        (void)emitError(func->loc, "a " + keyword +
                                       " has one function, 'forward'; got '" +
                                       func->name + "'");
        continue;
      }
      if (module->findFunction(func->name)) {
        if (module->isModel)
          (void)emitError(defLoc, "model '" + module->name +
                                      "' defines the entry '" + func->name +
                                      "' twice");
        else
          (void)emitError(defLoc, keyword + " '" + module->name +
                                      "' defines 'forward' twice");
        continue;
      }
      if (module->isModel && !isEntrySymbol(func->name)) {
        (void)emitError(func->loc,
                        "entry '" + func->name +
                            "' is not a valid symbol: an entry name is "
                            "exported as seqc_invoke_<name>, so it must "
                            "match [A-Za-z][A-Za-z0-9_]*");
        continue;
      }
      module->functions.push_back(std::move(func));
      continue;
    }
    if (tok.isNot(Token::identifier) && !keywordMember) {
      (void)emitError("expected a member ('name = ...') or 'def forward'");
      skipStatement();
      continue;
    }
    ast::MemberDecl member;
    member.name = tok.getSpelling();
    member.loc = tok.getLoc();
    consume();
    if (failed(expect(Token::equal, "after the member name")) ||
        !(member.value = parseExpr()) || failed(expectStatementEnd())) {
      skipStatement();
      continue;
    }
    module->members.push_back(std::move(member));
  }
  if (failed(expect(Token::r_brace, "to end the " + keyword + " body")))
    return nullptr;
  module->forward = module->findFunction("forward");
  if (!module->forward && module->isModel && !module->functions.empty())
    module->forward = module->functions.front().get();
  if (!module->forward) {
    if (numErrors != errorsBefore)
      return nullptr;
    (void)emitError(module->loc,
                    keyword + " '" + module->name + "' has no 'def forward'");
    return nullptr;
  }
  return module;
}

std::unique_ptr<ast::FuncDecl> Parser::parseFuncDecl() {
  auto func = std::make_unique<ast::FuncDecl>();
  consume(); // 'def'
  func->loc = tok.getLoc();
  func->name = tok.getSpelling();
  if (failed(expect(Token::identifier, "(the function name) after 'def'")))
    return nullptr;
  {
    BracketScope brackets(bracketDepth);
    if (failed(expect(Token::l_paren, "after the function name")))
      return nullptr;
    if (tok.isNot(Token::r_paren) && failed(parseParamList(func->params)))
      return nullptr;
  }
  if (failed(expect(Token::r_paren, "after the parameters")))
    return nullptr;

  // Only '->' or '{' can follow, so a line break before them is harmless.
  skipSeparators(/*semicolons=*/false);
  if (tok.is(Token::arrow)) {
    func->hasResultList = true;
    func->resultsLoc = tok.getLoc();
    consume();
    bool parenthesized = tok.is(Token::l_paren);
    std::optional<BracketScope> brackets;
    if (parenthesized) {
      brackets.emplace(bracketDepth);
      consume();
    }
    do {
      if (parenthesized && tok.is(Token::r_paren))
        break; // trailing comma
      ast::ResultDecl result;
      result.name = tok.getSpelling();
      result.loc = tok.getLoc();
      if (failed(expect(Token::identifier, "(a result name) after '->'")) ||
          failed(expect(Token::colon, "after the result name")))
        return nullptr;
      std::optional<ast::TypeAnnotation> type = parseType();
      if (!type)
        return nullptr;
      if (type->kind != ast::TypeAnnotation::Kind::Tensor) {
        (void)emitError(type->loc, "a result must have a tensor type");
        return nullptr;
      }
      result.type = std::move(*type);
      func->results.push_back(std::move(result));
    } while (parenthesized && consumeIf(Token::comma));
    if (parenthesized) {
      brackets.reset();
      if (failed(expect(Token::r_paren, "after the results")))
        return nullptr;
    }
  }

  unsigned errorsBefore = numErrors;
  SMLoc closeLoc;
  if (failed(parseBlock(func->body, &closeLoc)))
    return nullptr;
  // A syntax error in the body may have swallowed the return statement.
  if (numErrors == errorsBefore)
    checkReturns(func->body, func->name, closeLoc);
  return func;
}

void Parser::checkReturns(const ast::Block &body, StringRef name,
                          SMLoc closeLoc) {
  // Functions are inlined at compile time and have no control flow, so the
  // one return statement is the last.
  std::function<void(const ast::Block &, bool)> check =
      [&](const ast::Block &block, bool isBody) {
        for (const ast::StmtPtr &stmt : block) {
          if (auto *loop = dyn_cast<ast::ForStmt>(stmt.get())) {
            check(loop->getBody(), /*isBody=*/false);
            continue;
          }
          if (!isa<ast::ReturnStmt>(stmt.get()))
            continue;
          if (!isBody)
            (void)emitError(stmt->getLoc(),
                            "'return' inside 'for'; a "
                            "function returns once, at its end");
          else if (stmt != block.back())
            (void)emitError(stmt->getLoc(),
                            "'return' must be the last statement of '" + name +
                                "'");
        }
      };
  check(body, /*isBody=*/true);
  if (body.empty() || !isa<ast::ReturnStmt>(body.back().get()))
    (void)emitError(closeLoc, "function '" + name + "' must end with 'return'");
}

ParseResult Parser::parseParamList(std::vector<ast::ParamDecl> &params) {
  do {
    if (tok.is(Token::r_paren))
      break; // trailing comma
    ast::ParamDecl param;
    param.name = tok.getSpelling();
    param.loc = tok.getLoc();
    if (failed(expect(Token::identifier, "(a parameter name)")))
      return failure();
    if (consumeIf(Token::colon)) {
      param.type = parseType();
      if (!param.type)
        return failure();
    }
    if (tok.is(Token::kw_in)) {
      param.rangeLoc = tok.getLoc();
      consume();
      BracketScope brackets(bracketDepth);
      if (failed(expect(Token::l_square, "to begin the range [lo, hi]")))
        return failure();
      if (!(param.rangeLower = parseExpr()) ||
          failed(expect(Token::comma, "between the bounds of the range")) ||
          !(param.rangeUpper = parseExpr()))
        return failure();
      if (failed(expect(Token::r_square, "to end the range [lo, hi]")))
        return failure();
    }
    if (consumeIf(Token::equal) && !(param.defaultValue = parseExpr()))
      return failure();
    params.push_back(std::move(param));
  } while (consumeIf(Token::comma));
  return success();
}

std::optional<ast::TypeAnnotation> Parser::parseType() {
  ast::TypeAnnotation type;
  type.loc = tok.getLoc();
  switch (tok.getKind()) {
  case Token::kw_int:
    type.kind = ast::TypeAnnotation::Kind::Int;
    consume();
    return type;
  case Token::kw_float:
    type.kind = ast::TypeAnnotation::Kind::Float;
    consume();
    return type;
  case Token::kw_bool:
    type.kind = ast::TypeAnnotation::Kind::Bool;
    consume();
    return type;
  case Token::kw_f16:
    type.elementType = ast::ElementType::F16;
    break;
  case Token::kw_bf16:
    type.elementType = ast::ElementType::BF16;
    break;
  case Token::kw_f32:
    type.elementType = ast::ElementType::F32;
    break;
  case Token::kw_f64:
    type.elementType = ast::ElementType::F64;
    break;
  case Token::kw_i32:
    type.elementType = ast::ElementType::I32;
    break;
  case Token::kw_i64:
    type.elementType = ast::ElementType::I64;
    break;
  default:
    (void)emitError("expected a type: 'int', 'float', 'bool' or a tensor "
                    "type such as f32[n, 64]");
    return std::nullopt;
  }
  type.kind = ast::TypeAnnotation::Kind::Tensor;
  consume();
  {
    BracketScope brackets(bracketDepth);
    if (failed(expect(Token::l_square, "after the element type (a tensor "
                                       "type is written f32[d0, d1, ...])")))
      return std::nullopt;
    while (tok.isNot(Token::r_square)) {
      ast::ExprPtr dim = parseExpr();
      if (!dim)
        return std::nullopt;
      type.dims.push_back(std::move(dim));
      if (!consumeIf(Token::comma))
        break;
    }
  }
  if (failed(expect(Token::r_square, "to end the shape")))
    return std::nullopt;
  return type;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

ParseResult Parser::parseBlock(ast::Block &block, SMLoc *closeLoc) {
  NestingGuard guard(*this);
  // Braces may open on the next line.
  skipSeparators(/*semicolons=*/false);
  if (failed(guard.check(tok.getLoc())) ||
      failed(expect(Token::l_brace, "to begin a block")))
    return failure();
  while (true) {
    skipSeparators();
    if (tok.isAny(Token::r_brace, Token::eof))
      break;
    ast::StmtPtr stmt = parseStmt();
    if (!stmt || failed(expectStatementEnd())) {
      skipStatement();
      continue;
    }
    block.push_back(std::move(stmt));
  }
  if (closeLoc)
    *closeLoc = tok.getLoc();
  return expect(Token::r_brace, "to end the block");
}

ast::StmtPtr Parser::parseStmt() {
  SMLoc loc = tok.getLoc();
  if (consumeIf(Token::kw_return)) {
    std::vector<ast::ExprPtr> values;
    do {
      // A line ending in a comma continues the list.
      skipSeparators(/*semicolons=*/false);
      ast::ExprPtr value = parseExpr();
      if (!value)
        return nullptr;
      values.push_back(std::move(value));
    } while (consumeIf(Token::comma));
    return std::make_unique<ast::ReturnStmt>(loc, std::move(values));
  }

  if (consumeIf(Token::kw_for)) {
    ast::Target var{tok.getSpelling(), tok.getLoc()};
    if (failed(expect(Token::identifier, "(the loop variable) after 'for'")) ||
        failed(expect(Token::kw_in, "after the loop variable")))
      return nullptr;
    ast::ExprPtr iterable = parseExpr();
    if (!iterable)
      return nullptr;
    ast::Block body;
    if (failed(parseBlock(body)))
      return nullptr;
    return std::make_unique<ast::ForStmt>(loc, var, std::move(iterable),
                                          std::move(body));
  }

  if (tok.isNot(Token::identifier)) {
    (void)emitError(
        "expected a statement: 'name = ...', 'for ... in ...' or 'return'");
    return nullptr;
  }
  std::vector<ast::Target> targets;
  do {
    targets.push_back({tok.getSpelling(), tok.getLoc()});
    if (failed(expect(Token::identifier, "(a name to assign)")))
      return nullptr;
  } while (consumeIf(Token::comma));
  if (failed(expect(Token::equal, "after the assigned names (a statement "
                                  "is 'name = ...', 'for' or 'return')")))
    return nullptr;
  ast::ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<ast::AssignStmt>(loc, std::move(targets),
                                           std::move(value));
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ast::ExprPtr Parser::parseExpr() {
  NestingGuard guard(*this);
  if (failed(guard.check(tok.getLoc())))
    return nullptr;
  return parseComparison();
}

/// The comparison operator of token `tok`, if it is one.
static std::optional<ast::BinaryExpr::Op> getComparison(const Token &tok) {
  switch (tok.getKind()) {
  case Token::equal_equal:
    return ast::BinaryExpr::Op::Eq;
  case Token::not_equal:
    return ast::BinaryExpr::Op::Ne;
  case Token::less:
    return ast::BinaryExpr::Op::Lt;
  case Token::less_equal:
    return ast::BinaryExpr::Op::Le;
  case Token::greater:
    return ast::BinaryExpr::Op::Gt;
  case Token::greater_equal:
    return ast::BinaryExpr::Op::Ge;
  default:
    return std::nullopt;
  }
}

ast::ExprPtr Parser::parseComparison() {
  ast::ExprPtr lhs = parseAdditive();
  std::optional<ast::BinaryExpr::Op> op;
  if (!lhs || !(op = getComparison(tok)))
    return lhs;
  SMLoc loc = tok.getLoc();
  consume();
  ast::ExprPtr rhs = parseAdditive();
  if (!rhs)
    return nullptr;
  if (getComparison(tok)) {
    (void)emitError("comparisons do not chain ('a < b < c'); compare two "
                    "values at a time");
    return nullptr;
  }
  const ast::Expr *l = lhs.get(), *r = rhs.get();
  return finish(std::make_unique<ast::BinaryExpr>(loc, *op, std::move(lhs),
                                                  std::move(rhs)),
                {l, r});
}

ast::ExprPtr Parser::parseAdditive() {
  ast::ExprPtr lhs = parseMultiplicative();
  while (lhs && tok.isAny(Token::plus, Token::minus)) {
    auto op = tok.is(Token::plus) ? ast::BinaryExpr::Op::Add
                                  : ast::BinaryExpr::Op::Sub;
    SMLoc loc = tok.getLoc();
    consume();
    ast::ExprPtr rhs = parseMultiplicative();
    if (!rhs)
      return nullptr;
    const ast::Expr *l = lhs.get(), *r = rhs.get();
    lhs = finish(std::make_unique<ast::BinaryExpr>(loc, op, std::move(lhs),
                                                   std::move(rhs)),
                 {l, r});
  }
  return lhs;
}

ast::ExprPtr Parser::parseMultiplicative() {
  ast::ExprPtr lhs = parseUnary();
  while (lhs && tok.isAny(Token::star, Token::slash, Token::at)) {
    auto op = tok.is(Token::star)    ? ast::BinaryExpr::Op::Mul
              : tok.is(Token::slash) ? ast::BinaryExpr::Op::Div
                                     : ast::BinaryExpr::Op::MatMul;
    SMLoc loc = tok.getLoc();
    consume();
    ast::ExprPtr rhs = parseUnary();
    if (!rhs)
      return nullptr;
    const ast::Expr *l = lhs.get(), *r = rhs.get();
    lhs = finish(std::make_unique<ast::BinaryExpr>(loc, op, std::move(lhs),
                                                   std::move(rhs)),
                 {l, r});
  }
  return lhs;
}

ast::ExprPtr Parser::parseUnary() {
  if (tok.isNot(Token::minus))
    return parsePower();
  SMLoc loc = tok.getLoc();
  NestingGuard guard(*this);
  if (failed(guard.check(loc)))
    return nullptr;
  consume();
  ast::ExprPtr operand = parseUnary();
  if (!operand)
    return nullptr;
  const ast::Expr *o = operand.get();
  return finish(std::make_unique<ast::UnaryExpr>(loc, ast::UnaryExpr::Op::Neg,
                                                 std::move(operand)),
                {o});
}

ast::ExprPtr Parser::parsePower() {
  ast::ExprPtr base = parsePostfix();
  if (!base || tok.isNot(Token::star_star))
    return base;
  SMLoc loc = tok.getLoc();
  NestingGuard guard(*this);
  if (failed(guard.check(loc)))
    return nullptr;
  consume();
  // Right-associative and binding tighter than unary minus on its left, as in
  // Python: -x**2 is -(x**2), 2**-1 is 2**(-1).
  ast::ExprPtr exponent = parseUnary();
  if (!exponent)
    return nullptr;
  const ast::Expr *b = base.get(), *e = exponent.get();
  return finish(std::make_unique<ast::BinaryExpr>(loc, ast::BinaryExpr::Op::Pow,
                                                  std::move(base),
                                                  std::move(exponent)),
                {b, e});
}

ast::ExprPtr Parser::parsePostfix() {
  ast::ExprPtr expr = parsePrimary();
  while (expr) {
    SMLoc loc = tok.getLoc();
    if (tok.is(Token::l_paren)) {
      // Diagnostics about a call point at the callee's name.
      if (auto *name = dyn_cast<ast::NameExpr>(expr.get()))
        loc = name->getLoc();
      else if (auto *member = dyn_cast<ast::MemberExpr>(expr.get()))
        loc = member->getLoc();
      std::vector<ast::Argument> args;
      unsigned height = expr->getHeight();
      {
        BracketScope brackets(bracketDepth);
        consume(); // '('
        bool sawKeyword = false;
        while (tok.isNot(Token::r_paren)) {
          ast::Argument arg;
          arg.loc = tok.getLoc();
          ast::ExprPtr value = parseExpr();
          if (!value)
            return nullptr;
          if (tok.is(Token::equal)) {
            auto *name = dyn_cast<ast::NameExpr>(value.get());
            if (!name) {
              (void)emitError("expected a parameter name before '='");
              return nullptr;
            }
            consume();
            arg.keyword = name->getName();
            arg.loc = name->getLoc();
            if (!(value = parseExpr()))
              return nullptr;
            sawKeyword = true;
          } else if (sawKeyword) {
            (void)emitError(arg.loc,
                            "positional argument after a keyword argument");
            return nullptr;
          }
          height = std::max(height, value->getHeight());
          arg.value = std::move(value);
          args.push_back(std::move(arg));
          if (!consumeIf(Token::comma))
            break;
        }
      }
      if (failed(expect(Token::r_paren, "to end the arguments")))
        return nullptr;
      expr = finish(std::make_unique<ast::CallExpr>(loc, std::move(expr),
                                                    std::move(args)),
                    height);
      continue;
    }
    if (tok.is(Token::l_square)) {
      std::vector<ast::Subscript> subscripts;
      unsigned height = expr->getHeight();
      {
        BracketScope brackets(bracketDepth);
        consume(); // '['
        if (failed(parseSubscripts(subscripts, height)))
          return nullptr;
      }
      if (failed(expect(Token::r_square, "to end the subscript")))
        return nullptr;
      expr = finish(std::make_unique<ast::SubscriptExpr>(loc, std::move(expr),
                                                         std::move(subscripts)),
                    height);
      continue;
    }
    if (consumeIf(Token::period)) {
      StringRef name = tok.getSpelling();
      SMLoc nameLoc = tok.getLoc();
      // After '.', a keyword is a member name (`llama.model`).
      if (tok.isKeyword())
        consume();
      else if (failed(expect(Token::identifier, "(a member name) after '.'")))
        return nullptr;
      const ast::Expr *base = expr.get();
      expr = finish(
          std::make_unique<ast::MemberExpr>(nameLoc, std::move(expr), name),
          {base});
      continue;
    }
    if (consumeIf(Token::caret)) {
      if (tok.isNot(Token::identifier) || tok.getSpelling() != "T") {
        (void)emitError("expected 'T' after '^' (x^T transposes the last two "
                        "dimensions)");
        return nullptr;
      }
      consume();
      const ast::Expr *base = expr.get();
      expr = finish(std::make_unique<ast::TransposeExpr>(loc, std::move(expr)),
                    {base});
      continue;
    }
    break;
  }
  return expr;
}

ParseResult Parser::parseSubscripts(std::vector<ast::Subscript> &subscripts,
                                    unsigned &height) {
  do {
    if (tok.is(Token::r_square) && !subscripts.empty())
      break; // trailing comma
    ast::Subscript sub;
    sub.loc = tok.getLoc();
    if (consumeIf(Token::ellipsis)) {
      sub.kind = ast::Subscript::Kind::Ellipsis;
      subscripts.push_back(std::move(sub));
      continue;
    }
    ast::ExprPtr lower;
    if (tok.isNot(Token::colon) && !(lower = parseExpr()))
      return failure();
    if (!consumeIf(Token::colon)) {
      sub.kind = ast::Subscript::Kind::Index;
      height = std::max(height, lower->getHeight());
      sub.index = std::move(lower);
      subscripts.push_back(std::move(sub));
      continue;
    }
    sub.kind = ast::Subscript::Kind::Slice;
    ast::ExprPtr upper;
    if (tok.isNot(Token::comma) && tok.isNot(Token::r_square) &&
        tok.isNot(Token::colon) && !(upper = parseExpr()))
      return failure();
    if (tok.is(Token::colon))
      return emitError("slices with a step (a:b:c) are not supported");
    if (lower)
      height = std::max(height, lower->getHeight());
    if (upper)
      height = std::max(height, upper->getHeight());
    sub.lower = std::move(lower);
    sub.upper = std::move(upper);
    subscripts.push_back(std::move(sub));
  } while (consumeIf(Token::comma));
  return success();
}

ast::ExprPtr Parser::parsePrimary() {
  SMLoc loc = tok.getLoc();
  switch (tok.getKind()) {
  case Token::integer: {
    std::optional<int64_t> value = tok.getIntegerValue();
    if (!value) {
      (void)emitError("integer literal is too large (the largest is "
                      "9223372036854775807)");
      return nullptr;
    }
    consume();
    return std::make_unique<ast::IntegerExpr>(loc, *value);
  }
  case Token::floating: {
    std::optional<double> value = tok.getFloatValue();
    if (!value) {
      (void)emitError("float literal is out of range");
      return nullptr;
    }
    consume();
    return std::make_unique<ast::FloatExpr>(loc, *value);
  }
  case Token::string: {
    StringRef value = tok.getStringValue();
    consume();
    return std::make_unique<ast::StringExpr>(loc, value);
  }
  case Token::kw_True:
  case Token::kw_False: {
    bool value = tok.is(Token::kw_True);
    consume();
    return std::make_unique<ast::BoolExpr>(loc, value);
  }
  case Token::kw_None:
    consume();
    return std::make_unique<ast::NoneExpr>(loc);
  case Token::identifier:
  // The declaration keywords never begin an expression, so there they are
  // names: a member called `model` is called as `model(x)`.
  case Token::kw_model:
  case Token::kw_module:
  case Token::kw_def: {
    StringRef name = tok.getSpelling();
    consume();
    return std::make_unique<ast::NameExpr>(loc, name);
  }
  // An element type in an expression is its name, a string: `x.to(bf16)`,
  // `Parameter(4, dtype=i64)`.
  case Token::kw_f16:
  case Token::kw_bf16:
  case Token::kw_f32:
  case Token::kw_f64:
  case Token::kw_i32:
  case Token::kw_i64: {
    StringRef name = tok.getSpelling();
    consume();
    return std::make_unique<ast::StringExpr>(loc, name);
  }
  case Token::l_paren: {
    ast::ExprPtr inner;
    {
      BracketScope brackets(bracketDepth);
      consume();
      inner = parseExpr();
      if (!inner)
        return nullptr;
    }
    if (failed(expect(Token::r_paren, "to close the parenthesis")))
      return nullptr;
    return inner;
  }
  case Token::l_square: {
    std::vector<ast::ExprPtr> elements;
    unsigned height = 0;
    // A list comprehension, once its parts are parsed.
    ast::ExprPtr compElement, compIterable;
    StringRef compVar;
    SMLoc compVarLoc;
    {
      BracketScope brackets(bracketDepth);
      consume();
      while (tok.isNot(Token::r_square)) {
        ast::ExprPtr element = parseExpr();
        if (!element)
          return nullptr;
        if (elements.empty() && tok.is(Token::kw_for)) {
          consume();
          StringRef var = tok.getSpelling();
          SMLoc varLoc = tok.getLoc();
          if (failed(expect(Token::identifier,
                            "(the loop variable) after 'for'")) ||
              failed(expect(Token::kw_in, "after the loop variable")))
            return nullptr;
          if (!(compIterable = parseExpr()))
            return nullptr;
          compElement = std::move(element);
          compVar = var;
          compVarLoc = varLoc;
          break;
        }
        height = std::max(height, element->getHeight());
        elements.push_back(std::move(element));
        if (!consumeIf(Token::comma))
          break;
      }
    }
    if (compElement) {
      if (failed(expect(Token::r_square, "to end the list comprehension")))
        return nullptr;
      const ast::Expr *e = compElement.get(), *i = compIterable.get();
      return finish(std::make_unique<ast::ListComprehensionExpr>(
                        loc, std::move(compElement), compVar, compVarLoc,
                        std::move(compIterable)),
                    {e, i});
    }
    if (failed(expect(Token::r_square, "to end the list")))
      return nullptr;
    return finish(std::make_unique<ast::ListExpr>(loc, std::move(elements)),
                  height);
  }
  default:
    (void)emitError("expected an expression");
    return nullptr;
  }
}
