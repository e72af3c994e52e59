"""Prompt templates (files in prompts/) and their rendering: `{{name}}` placeholders, every one of
which must be given, so that a renamed placeholder fails loudly instead of reaching an agent."""

from __future__ import annotations

import re
from pathlib import Path

from . import interface
from .manifest import Manifest, Module

PROMPTS_DIR = Path(__file__).resolve().parents[1] / "prompts"
PROMPTS_IN_REPO = Path("tools/agent_driver/prompts")
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


class TemplateError(ValueError):
    pass


def template_files(language: str) -> dict[str, Path]:
    """The templates a translation into `language` uses, by role, as repo-relative paths; all of
    them are lock inputs."""
    return {
        "translate": PROMPTS_IN_REPO / "translate.md",
        "repair": PROMPTS_IN_REPO / "repair.md",
        "target_spec": PROMPTS_IN_REPO / f"target_{language}.md",
    }


def read_template(root: Path, path: Path) -> str:
    """A template from the working tree (the one the lock hashes), else the copy packaged with the driver."""
    in_tree = root / path
    if in_tree.is_file():
        return in_tree.read_text()
    packaged = PROMPTS_DIR / path.name
    if packaged.is_file():
        return packaged.read_text()
    raise TemplateError(f"prompt template {path} not found")


def render(template: str, values: dict[str, str], name: str = "template") -> str:
    missing = sorted({m.group(1) for m in PLACEHOLDER.finditer(template)} - set(values))
    if missing:
        raise TemplateError(f"{name} uses placeholders with no value: {missing}")
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


def _bullets(items) -> str:
    return "\n".join(f"- `{item}`" for item in items) or "- (none)"


def common_values(manifest: Manifest, module: Module, reference_source: str) -> dict[str, str]:
    spec_path = template_files(manifest.target_language)["target_spec"]
    target_spec = read_template(manifest.root, spec_path)
    tests = "\n".join(f"- {level.upper()}: " + (", ".join(f"`{t}`" for t in (module.l1 if level == "l1" else targets))
                                                 or "(none)")
                      for level, targets in manifest.tests.items())
    equivalence = ", ".join(f"{k} = {v}" for k, v in manifest.equivalence.items()) or "not stated"
    return {
        "env": manifest.env, "module": module.name, "target_language": manifest.target_language.upper(),
        "targets": _bullets(module.targets), "package": manifest.package, "version": manifest.version,
        "reference_path": module.reference, "reference_source": reference_source.rstrip("\n"),
        "adapter": _bullets(manifest.adapter), "components": _bullets(module.components),
        "target_spec": target_spec.rstrip("\n"), "tests": tests, "equivalence": equivalence,
        "interface": interface.describe(manifest, module),
    }


def translation_prompt(manifest: Manifest, module: Module, reference_source: str) -> str:
    path = template_files(manifest.target_language)["translate"]
    return render(read_template(manifest.root, path), common_values(manifest, module, reference_source), path.name)


def repair_prompt(manifest: Manifest, module: Module, reference_source: str, *, level: str, report: str,
                  components: list[str], iteration: int, reverted: list[str]) -> str:
    values = common_values(manifest, module, reference_source)
    values.update(
        level=level.upper(), report=report.rstrip("\n"), iteration=str(iteration),
        component_line=(f"The failing component: **{', '.join(components)}**." if components
                        else "The report does not name a component."),
        reverted=("Your edits to these protected files were reverted: "
                  + ", ".join(f"`{p}`" for p in reverted) + "." if reverted else ""),
    )
    path = template_files(manifest.target_language)["repair"]
    return render(read_template(manifest.root, path), values, path.name)
