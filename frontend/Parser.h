//===- Parser.h - .seq recursive-descent parser -----------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Builds the AST of a .seq file. Each parse method documents the production
// it implements; docs/language.md collects them as the EBNF of the language.
//
// Errors are MLIR diagnostics at FileLineColLocs. The parser recovers at
// statement and declaration boundaries, so one run reports every independent
// syntax error (up to a limit), and never builds a tree deeper than
// `maxNesting`, which bounds the recursion of every later pass.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_FRONTEND_PARSER_H
#define SEQC_FRONTEND_PARSER_H

#include "frontend/AST.h"
#include "frontend/Lexer.h"
#include "frontend/SourceLocations.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include <memory>

namespace mlir::seq::frontend {

/// Limits that keep parsing of hostile input bounded.
struct ParserLimits {
  /// Deepest nesting of expressions and blocks.
  unsigned maxNesting = 256;
  /// Syntax errors reported before giving up.
  unsigned maxErrors = 20;
};

class Parser {
public:
  Parser(const llvm::SourceMgr &sourceMgr, unsigned bufferID,
         MLIRContext *context, ParserLimits limits = {});

  /// file ::= (decl | NEWLINE)* EOF
  ///
  /// Returns null when there was any syntax error (all of them reported).
  std::unique_ptr<ast::SourceFile> parseFile();

private:
  //===--------------------------------------------------------------------===//
  // Tokens and diagnostics
  //===--------------------------------------------------------------------===//

  /// Moves to the next token. Inside parentheses and brackets, line breaks
  /// are insignificant and skipped.
  void consume();
  /// Consumes the current token if it has kind `kind`.
  bool consumeIf(Token::Kind kind);
  /// Consumes a token of kind `kind`, or reports "expected <kind> <context>".
  ParseResult expect(Token::Kind kind, const Twine &context);
  /// Skips newline tokens (and semicolons when `semicolons`).
  void skipSeparators(bool semicolons = true);

  /// Reports an error at `loc` and returns failure. An error at an `error`
  /// token was already reported by the lexer and is not repeated.
  ParseResult emitError(llvm::SMLoc loc, const Twine &message);
  ParseResult emitError(const Twine &message) {
    return emitError(tok.getLoc(), message);
  }
  /// Reports an error unconditionally (the lexer's), counting it.
  void reportError(llvm::SMLoc loc, const Twine &message);
  /// After a statement: a newline or ';' (consumed), or a '}' or the end of
  /// the file (left for the caller).
  ParseResult expectStatementEnd();
  /// Whether parsing should stop: too many errors.
  bool shouldStop() const { return stopped; }

  /// Error recovery: skips to the end of the current statement (a newline or
  /// ';' outside braces, consumed) or to the '}' closing the enclosing block
  /// (not consumed).
  void skipStatement();
  /// Error recovery: skips to the next top-level 'model', 'module' or 'def'.
  void skipDeclaration();

  /// Counts nesting while a parse method is active; fails past the limit.
  class NestingGuard;
  /// Gives `expr` its height and checks it against the nesting limit.
  ast::ExprPtr finish(ast::ExprPtr expr,
                      std::initializer_list<const ast::Expr *> children);
  ast::ExprPtr finish(ast::ExprPtr expr, unsigned childHeight);

  //===--------------------------------------------------------------------===//
  // Declarations
  //===--------------------------------------------------------------------===//

  /// decl ::= module-decl | func-decl
  ParseResult parseDecl(ast::SourceFile &file);

  /// module-decl ::= ('model' | 'module') IDENT '(' param-list? ')'
  ///                 '{' (member | func-decl | sep)* '}'
  /// member      ::= (IDENT | keyword) '=' expr
  ///
  /// A module has exactly one function, `forward`; a model one or more, its
  /// entries, with distinct names.
  std::unique_ptr<ast::ModuleDecl> parseModuleDecl();

  /// func-decl   ::= 'def' IDENT '(' param-list? ')' ('->' results)? block
  /// results     ::= result | '(' result (',' result)* ','? ')'
  /// result      ::= IDENT ':' tensor-type
  ///
  /// The body must end with a return statement, its only one.
  std::unique_ptr<ast::FuncDecl> parseFuncDecl();

  /// param-list ::= param (',' param)* ','?
  /// param      ::= IDENT (':' type)? ('in' '[' expr ',' expr ']')? ('=' expr)?
  ParseResult parseParamList(std::vector<ast::ParamDecl> &params);

  /// type        ::= 'int' | 'float' | 'bool' | tensor-type
  /// tensor-type ::= dtype '[' (expr (',' expr)* ','?)? ']'
  /// dtype       ::= 'f16' | 'bf16' | 'f32' | 'f64' | 'i32' | 'i64'
  std::optional<ast::TypeAnnotation> parseType();

  //===--------------------------------------------------------------------===//
  // Statements
  //===--------------------------------------------------------------------===//

  /// block ::= '{' (stmt (NEWLINE | ';') | NEWLINE | ';')* '}'
  ///
  /// Stores the location of the closing brace in `closeLoc` when given.
  ParseResult parseBlock(ast::Block &block, llvm::SMLoc *closeLoc = nullptr);
  /// Checks that `body`, the body of function `name`, ends with its only
  /// return statement; `closeLoc` is its closing brace.
  void checkReturns(const ast::Block &body, llvm::StringRef name,
                    llvm::SMLoc closeLoc);

  /// stmt   ::= assign | for | return
  /// assign ::= IDENT (',' IDENT)* '=' expr
  /// for    ::= 'for' IDENT 'in' expr block
  /// return ::= 'return' expr (',' expr)*
  ast::StmtPtr parseStmt();

  //===--------------------------------------------------------------------===//
  // Expressions (Python's precedence, lowest first)
  //===--------------------------------------------------------------------===//

  /// expr ::= comparison
  ast::ExprPtr parseExpr();
  /// comparison ::= additive (('==' | '!=' | '<' | '<=' | '>' | '>=')
  ///                          additive)?
  ///
  /// Comparisons do not chain.
  ast::ExprPtr parseComparison();
  /// additive ::= multiplicative (('+' | '-') multiplicative)*
  ast::ExprPtr parseAdditive();
  /// multiplicative ::= unary (('*' | '/' | '@') unary)*
  ast::ExprPtr parseMultiplicative();
  /// unary ::= '-' unary | power
  ast::ExprPtr parseUnary();
  /// power ::= postfix ('**' unary)?
  ast::ExprPtr parsePower();
  /// postfix ::= primary ( '(' args? ')' | '[' subscripts ']'
  ///                     | '.' (IDENT | keyword) | '^' 'T' )*
  /// args    ::= arg (',' arg)* ','?
  /// arg     ::= (IDENT '=')? expr
  ast::ExprPtr parsePostfix();
  /// subscripts ::= subscript (',' subscript)* ','?
  /// subscript  ::= '...' | expr? ':' expr? | expr
  ParseResult parseSubscripts(std::vector<ast::Subscript> &subscripts,
                              unsigned &height);
  /// primary ::= INTEGER | FLOAT | STRING | 'True' | 'False' | 'None' | IDENT
  ///           | 'model' | 'module' | 'def' | dtype | '(' expr ')' | list
  ///
  /// The declaration keywords are names here; a dtype is its name as a
  /// string.
  /// list    ::= '[' (expr (',' expr)* ','?)? ']'
  ///           | '[' expr 'for' IDENT 'in' expr ']'
  ast::ExprPtr parsePrimary();

  SourceLocator locator;
  ParserLimits limits;
  Lexer lexer;
  Token tok;
  /// Open parentheses and brackets around the current token.
  unsigned bracketDepth = 0;
  unsigned nesting = 0;
  unsigned numErrors = 0;
  bool stopped = false;
};

} // namespace mlir::seq::frontend

#endif // SEQC_FRONTEND_PARSER_H
