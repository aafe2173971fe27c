-- Per-minute metrics older than an hour and a quarter are folded by the cleanup into one row per job
-- and quarter hour (at the quarter's first minute), so a chart of a day or a week reads about a
-- fifteenth of the rows. Sums are unchanged, so every reader (and the last release's) adds them up as
-- before. The cleanup resumes the folding where it stopped.
ALTER TABLE {{prefix}}housekeeping ADD COLUMN metrics_folded_until timestamptz;
