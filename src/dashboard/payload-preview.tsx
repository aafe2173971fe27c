/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { FC } from "hono/jsx";
import type { PayloadPreview } from "../store/admin/views.js";

/** `812 B`, `12.3 KB`, `1.0 MB`. */
export const size = (bytes: number): string =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * A list row's payload: the start of its JSON text (lists never carry whole
 * payloads; the detail page shows it) and, when that was cut, the full size (a large one's is not measured).
 */
export const PayloadCell: FC<{ row: PayloadPreview }> = ({ row }) => (
  <>
    <code>
      {row.payloadPreview}
      {/* A large payload's outline ({"id": …}, [2000 items]) is whole as it is: only a cut text gets an ellipsis. */}
      {row.payloadTruncated && row.payloadBytes !== null ? "…" : ""}
    </code>
    {row.payloadTruncated ? <div class="muted">{row.payloadBytes === null ? "over 8 KB" : size(row.payloadBytes)}</div> : null}
  </>
);
