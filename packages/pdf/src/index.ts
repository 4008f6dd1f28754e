export {
  createSlipRenderer,
  renderSlip,
  SlipDataError,
  validateSlipData,
  type SlipData,
  type SlipLine,
  type SlipRenderer,
  type SlipRendererOptions,
} from './slip.ts';
export {
  toBengaliDigits,
  formatAmount,
  formatTaka,
  formatTakaBilingual,
  monthNames,
  TAKA_SIGN,
  type MonthNames,
} from './format.ts';
export { sampleSlip, type SlipOverrides } from './fixtures.ts';
