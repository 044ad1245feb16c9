// Sanitized Markdown (react-markdown without raw HTML); links open in a new tab. Used by transcript entries and specifications.
import ReactMarkdown, { type Components } from "react-markdown";

const markdownComponents: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noreferrer noopener" />,
};

/** For one-line markdown inside a row: paragraphs become inline text. */
const inlineComponents: Components = {
  ...markdownComponents,
  p: ({ children }) => <>{children}</>,
};

export function Md({ text, inline }: { text: string; inline?: boolean }) {
  // react-markdown escapes raw HTML by default (no rehype-raw): nothing in the text becomes markup.
  return <ReactMarkdown components={inline ? inlineComponents : markdownComponents}>{text}</ReactMarkdown>;
}
