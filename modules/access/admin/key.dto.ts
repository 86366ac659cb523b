import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** Issue and update bodies are the configuration file's shape (api-key-definition.ts); rotation is the API's own. */
export class RotateKeyDto {
  /** How long the previous secret keeps working (seconds, at most 30 days); absent or 0 = it stops now. */
  @IsOptional() @IsInt() @Min(0) @Max(2_592_000)
  overlapSeconds?: number;
}
