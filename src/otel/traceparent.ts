import { type SpanContext, TraceFlags, isSpanContextValid } from "@opentelemetry/api";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The W3C `traceparent` of a span context, or undefined for an invalid one.
 * Written here rather than through the global propagator: the column holds
 * exactly this header, and it must be filled even where no propagator is
 * registered (a bare tracer provider, a hand-built Workers setup).
 */
export const formatTraceparent = (span: SpanContext | undefined): string | undefined => {
  if (!span || !isSpanContextValid(span)) return undefined;
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, "0")}`;
};

/** The remote span context a stored `traceparent` names, or undefined when it is not one. */
export const parseTraceparent = (value: string | null | undefined): SpanContext | undefined => {
  const match = value ? TRACEPARENT.exec(value) : null;
  if (!match) return undefined;
  const span: SpanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: parseInt(match[3]!, 16) & TraceFlags.SAMPLED, isRemote: true };
  return isSpanContextValid(span) ? span : undefined;
};
