import { IsBoolean, IsISO8601, IsObject, IsOptional } from 'class-validator';

/** `POST /admin/v1/prices/import`: a LiteLLM price map, and how to import it. */
export class PriceImportDto {
  /**
   * The map (`model_prices_and_context_window.json`'s content, or only its priced entries). Costs are JSON
   * numbers or decimal strings; send a cost with more than 15 significant digits as a string.
   */
  @IsObject()
  map!: Record<string, unknown>;

  /** Plan and answer, append nothing. */
  @IsOptional() @IsBoolean()
  dryRun?: boolean;

  /** When the imported prices start; default now. */
  @IsOptional() @IsISO8601({ strict: true })
  effectiveFrom?: string;

  /** Also list the map's entries that match no deployment (otherwise counted). */
  @IsOptional() @IsBoolean()
  verbose?: boolean;
}
