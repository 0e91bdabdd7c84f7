"""Facts read from a microservice's source by walking its syntax tree (nothing is executed).

Both the security scan and the code-grounded analysis start from these facts: which modules and
functions the code uses (resolved through import aliases), which parameters it reads with which defaults,
which bundle files it reads and writes, and which string literals it names.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from dagsmith.models.catalog import Parameter

_PARAM_CONTAINER = re.compile(r"param|config|option|setting|kwargs", re.IGNORECASE)
_CASTS = {"int": "int", "float": "float", "str": "str", "bool": "bool", "list": "list", "dict": "dict"}
_CONTRACT_ARGS = {"input", "output", "params"}
_MISSING_CHECKS = {"isna", "isnull", "hasnans", "isnan"}
#: The kit's declaration of parameters with their defaults: ``declared(params, n_estimators=200, ...)``.
_DECLARED = "dagsmith_kit.params.declared"


@dataclass
class CodeFacts:
    docstring: str = ""
    imports: set[str] = field(default_factory=set)  # fully qualified modules and names imported
    symbols: set[str] = field(default_factory=set)  # fully qualified functions/classes called or referenced
    methods: set[str] = field(default_factory=set)  # attribute names called on objects (fillna, write_table)
    attributes: set[str] = field(default_factory=set)  # attribute names read (dt, year, feature_importances_)
    method_args: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    call_keywords: dict[str, dict[str, Any]] = field(default_factory=lambda: defaultdict(dict))
    literals: set[str] = field(default_factory=set)
    parameters: dict[str, Parameter] = field(default_factory=dict)
    raises: int = 0
    raises_on_missing: bool = False
    functions: list[str] = field(default_factory=list)
    calls_with_param_paths: list[int] = field(default_factory=list)  # lines where a parameter builds a path
    patterns: set[str] = field(default_factory=set)  # computations recognised by shape: "zscore", "iqr"
    lines: int = 0

    @property
    def top_modules(self) -> set[str]:
        return {name.split(".")[0] for name in self.imports}

    def uses(self, *names: str) -> bool:
        """Whether any symbol, method or attribute ends with one of ``names``."""
        short = {s.rsplit(".", 1)[-1] for s in self.symbols} | self.methods | self.attributes
        return any(name in short for name in names)


def _literal(node: ast.AST) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _names_in(node: ast.AST) -> set[str]:
    """Every attribute and variable name mentioned in an expression."""
    names = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Attribute):
            names.add(child.attr)
        elif isinstance(child, ast.Name):
            names.add(child.id)
    return names


def _type_of(value: Any) -> str:
    if value is None:
        return "any"
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict", tuple: "list"}.get(
        type(value), "any"
    )


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.facts = CodeFacts()
        self.aliases: dict[str, str] = {}
        self._cast_stack: list[str] = []
        self._missing_names: set[str] = set()  # variables holding the result of a missing-value check
        self._keyword_stack: list[str] = []

    # ---- imports
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.facts.imports.add(alias.name)
            top = alias.name.split(".")[0]
            self.aliases[alias.asname or top] = alias.name if alias.asname else top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            qualified = f"{module}.{alias.name}" if module else alias.name
            self.facts.imports.add(qualified)
            self.aliases[alias.asname or alias.name] = qualified

    def _resolve(self, dotted: str) -> str:
        root, _, rest = dotted.partition(".")
        if root in self.aliases:
            return self.aliases[root] + ("." + rest if rest else "")
        return dotted

    # ---- definitions, raises, literals
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.facts.functions.append(node.name)
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        self.facts.raises += 1
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if _names_in(node.value) & _MISSING_CHECKS:
            self._missing_names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        # (x - x.mean()) / x.std(): a z-score, whatever the variables are called
        if (isinstance(node.op, ast.Div) and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Sub)
                and "mean" in _names_in(node.left.right) and "std" in _names_in(node.right)):
            self.facts.patterns.add("zscore")
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        if _names_in(node.test) & (_MISSING_CHECKS | self._missing_names) and any(
            isinstance(n, ast.Raise) for stmt in node.body for n in ast.walk(stmt)
        ):
            self.facts.raises_on_missing = True
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and 0 < len(node.value) <= 200:
            self.facts.literals.add(node.value)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.facts.attributes.add(node.attr)
        dotted = _dotted(node)
        if dotted and dotted.split(".")[0] in self.aliases:
            self.facts.symbols.add(self._resolve(dotted))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.aliases:
            self.facts.symbols.add(self._resolve(node.id))

    # ---- parameters read from the params mapping
    def _record_param(self, name: str, default_node: ast.AST | None, *, required: bool = False) -> None:
        ok, default = _literal(default_node) if default_node is not None else (True, None)
        cast = self._cast_stack[-1] if self._cast_stack else None
        kind = cast or _type_of(default if ok else None)
        used_in = self._keyword_stack[-1] if self._keyword_stack else ""
        if used_in.endswith("(**)"):  # read into Estimator(**...): it is the estimator's keyword of that name
            used_in = f"{used_in[:-3]}{name}=...)"
        existing = self.facts.parameters.get(name)
        if existing and existing.type != "any" and kind == "any":
            return
        self.facts.parameters[name] = Parameter(
            name=name, type=kind, default=default if ok else None, required=required,
            description=existing.description if existing and existing.description else used_in,
        )

    def visit_Subscript(self, node: ast.Subscript) -> None:
        base = _dotted(node.value) or ""
        ok, key = _literal(node.slice)
        if _PARAM_CONTAINER.search(base.split(".")[-1]) and ok and isinstance(key, str) \
                and isinstance(node.ctx, ast.Load):
            self._record_param(key, None, required=True)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        dotted = _dotted(func)
        cast = _CASTS.get(func.id) if isinstance(func, ast.Name) else None
        if isinstance(func, ast.Attribute) and func.attr == "quantile" and node.args:
            ok, q = _literal(node.args[0])
            if ok and q in (0.25, 0.75):
                self.facts.patterns.add("iqr")
        if isinstance(func, ast.Attribute):
            if (_dotted(func.value) or "").split(".")[0] not in self.aliases:
                self.facts.methods.add(func.attr)
            for arg in node.args[:1]:
                ok, value = _literal(arg)
                if ok and isinstance(value, str):
                    self.facts.method_args[func.attr].add(value)
            owner = _dotted(func.value) or ""
            if func.attr == "get" and node.args and _PARAM_CONTAINER.search(owner.split(".")[-1] or ""):
                ok, key = _literal(node.args[0])
                if ok and isinstance(key, str):
                    self._record_param(key, node.args[1] if len(node.args) > 1 else None)
            if func.attr == "add_argument" and node.args:
                self._argparse_param(node)
        if dotted:
            resolved = self._resolve(dotted)
            if dotted.split(".")[0] in self.aliases or "." not in dotted:
                self.facts.symbols.add(resolved)
            short = resolved.rsplit(".", 1)[-1]
            for kw in node.keywords:
                if kw.arg:
                    ok, value = _literal(kw.value)
                    if ok:
                        self.facts.call_keywords[short][kw.arg] = value
            if short in {"open", "Path", "join"} and self._mentions_params(node):
                self.facts.calls_with_param_paths.append(node.lineno)
            if resolved == _DECLARED and node.args and _PARAM_CONTAINER.search(_dotted(node.args[0]) or ""):
                for kw in node.keywords:
                    if kw.arg:
                        self._record_param(kw.arg, kw.value)
        # visit the function expression, then the arguments with cast/keyword context
        self.visit(func)
        if cast:
            self._cast_stack.append(cast)
        for arg in node.args:
            self.visit(arg)
        if cast:
            self._cast_stack.pop()
        callee = (dotted or "").rsplit(".", 1)[-1]
        for kw in node.keywords:
            inside = (f"{callee}({kw.arg}=...)" if kw.arg else f"{callee}(**)") if callee else ""
            self._keyword_stack.append(inside)
            self.visit(kw.value)
            self._keyword_stack.pop()

    def _mentions_params(self, node: ast.Call) -> bool:
        return any(isinstance(child, ast.Name) and _PARAM_CONTAINER.search(child.id) for child in ast.walk(node))

    def _argparse_param(self, node: ast.Call) -> None:
        ok, flag = _literal(node.args[0])
        if not (ok and isinstance(flag, str) and flag.startswith("--")):
            return
        name = flag.lstrip("-").replace("-", "_")
        if name in _CONTRACT_ARGS:
            return
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        kind = None
        if isinstance(keywords.get("type"), ast.Name):
            kind = _CASTS.get(keywords["type"].id)
        ok_default, default = _literal(keywords["default"]) if "default" in keywords else (True, None)
        ok_help, help_text = _literal(keywords["help"]) if "help" in keywords else (False, "")
        self.facts.parameters[name] = Parameter(
            name=name, type=kind or _type_of(default), default=default if ok_default else None,
            required=bool(_literal(keywords["required"])[1]) if "required" in keywords else False,
            description=help_text if ok_help and isinstance(help_text, str) else "",
        )


def extract_facts(source: str) -> CodeFacts:
    """Read the facts of one Python file (raises SyntaxError for invalid code)."""
    tree = ast.parse(source)
    visitor = _Visitor()
    visitor.visit(tree)
    facts = visitor.facts
    facts.docstring = ast.get_docstring(tree) or ""
    facts.lines = source.count("\n") + 1
    facts.method_args = dict(facts.method_args)
    facts.call_keywords = dict(facts.call_keywords)
    return facts
