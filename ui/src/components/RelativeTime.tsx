// A <time> element showing a relative time ("3 min ago") with the absolute time as its title.
import { formatAbsolute, formatRelative } from "../lib/time";
import { useNow } from "../lib/useNow";

export function RelativeTime({ value, prefix }: { value: string; prefix?: string }) {
  const now = useNow();
  return (
    <time className="reltime" dateTime={value} title={formatAbsolute(value)}>
      {prefix}
      {formatRelative(value, now)}
    </time>
  );
}
