export { defineSchedule, type MissedPolicy, type Schedule, type ScheduleDefinition, type TypedScheduleDefinition } from "./define.js";
export { createScheduling, occurrenceKey, type ListSchedulesQuery, type ScheduleInfo, type ScheduleOptions, type SchedulesApi } from "./runtime.js";
export { CronRule } from "./cron.js";
