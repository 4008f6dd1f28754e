export {
  createSlipRenderer,
  renderSlip,
  SlipDataError,
  BENGALI_LABELS,
  LATIN_LABELS,
  MAX_SLIP_LINES,
  validateSlipData,
  type SlipData,
  type SlipLine,
  type SlipRenderer,
  type SlipRendererOptions,
  type UnsupportedText,
} from './slip.ts';
export { toBengaliDigits, formatAmount, formatTaka, formatTakaBilingual, monthNames, TAKA_SIGN, type MonthNames } from './format.ts';
export { sampleSlip, type SlipOverrides } from './fixtures.ts';
