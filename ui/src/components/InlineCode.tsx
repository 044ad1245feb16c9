// Plain text from the engine with its `backticked` words shown as code (hints, toolchain messages); nothing else is interpreted.
export function InlineCode({ text }: { text: string }) {
  const parts = text.split(/`([^`\n]+)`/);
  return <>{parts.map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part))}</>;
}
