/** A 16 px ICO (one PNG inside): a check mark on the header's dark grey. 161 bytes. */
const ICO =
  "AAABAAEAEBAAAAEAIACLAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAQAAAAEAgGAAAAH/P/YQAAAFJJREFUeNpjYGBgYFDR1P9PDmagRDPckKFngP3OADAmywCYZrIMQNZMsgG4NGMYgE0BPs04DYApJKQZqxfQNeHTjDMMiNWMNxCJ0TxIkjKl2RkAByaTbDLFTYAAAAAASUVORK5CYII=";

/** The icon as a response, for `{base}/favicon.ico` and, from the app that mounts the dashboard, `/favicon.ico`. */
export const faviconResponse = (): Response =>
  new Response(Uint8Array.from(atob(ICO), (c) => c.charCodeAt(0)), {
    headers: { "Content-Type": "image/x-icon", "Cache-Control": "public, max-age=86400" },
  });
