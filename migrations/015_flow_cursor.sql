-- Where the round-robin over keys resumes, kept across ticks. Each tick's claims start after the last
-- key the previous tick served, so keys late in key order are reached even when a tick can look at only
-- some of the keys (many keys with nothing due: delayed or debounced jobs). Before, every tick started
-- again from the first key. A tick's final statement writes it; the last release's ticks ignore it.
ALTER TABLE {{prefix}}state ADD COLUMN flow_cursor text;
