// Syntax tokens for a file's diff: refractor (core plus the languages languageOf names) through react-diff-view's tokenize.
import { type HunkData, type HunkTokens, markEdits, tokenize } from "react-diff-view";
import bash from "refractor/bash";
import c from "refractor/c";
import { refractor } from "refractor/core";
import cpp from "refractor/cpp";
import css from "refractor/css";
import go from "refractor/go";
import ini from "refractor/ini";
import java from "refractor/java";
import javascript from "refractor/javascript";
import json from "refractor/json";
import jsx from "refractor/jsx";
import markdown from "refractor/markdown";
import markup from "refractor/markup";
import python from "refractor/python";
import rust from "refractor/rust";
import scss from "refractor/scss";
import sql from "refractor/sql";
import toml from "refractor/toml";
import tsx from "refractor/tsx";
import typescript from "refractor/typescript";
import yaml from "refractor/yaml";

for (const syntax of [
  markup,
  css,
  javascript,
  jsx,
  typescript,
  tsx,
  rust,
  python,
  json,
  scss,
  markdown,
  toml,
  yaml,
  bash,
  go,
  java,
  c,
  cpp,
  sql,
  ini,
]) {
  refractor.register(syntax);
}

/**
 * react-diff-view was written for refractor 3, whose highlight gave the node list; refractor 4+
 * gives a root holding it. This adapter hands it the list.
 */
const refractorV3 = {
  highlight: (text: string, language: string) => refractor.highlight(text, language).children,
};

/** Tokens with syntax classes (when the language is known) and word-level edits marked; null if tokenizing fails. */
export function diffTokens(hunks: HunkData[], language: string | null): HunkTokens | null {
  if (hunks.length === 0) return null;
  const enhancers = [markEdits(hunks, { type: "block" })];
  try {
    if (language && refractor.registered(language)) {
      return tokenize(hunks, { highlight: true, refractor: refractorV3, language, enhancers });
    }
    return tokenize(hunks, { enhancers });
  } catch (e) {
    console.warn("kiln: could not tokenize a diff", e);
    return null;
  }
}
